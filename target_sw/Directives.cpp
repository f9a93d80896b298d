/** \file
 * The Sunway directives as marks on the Funcs, and reading them back.
 */
#include "target_sw/Directives.h"

namespace sw {

using namespace Halide;
using Halide::Internal::Function;

namespace {

/** The trace tags that carry the directives. */
const char *const kDoubleBuffer = "sw::double_buffer";
const char *const kStageOutput = "sw::stage_output";
const char *const kSplitPhases = "sw::split_phases";
const char *const kPlaceRows = "sw::place_rows";
const char *const kBroadcastDma = "sw::broadcast(Sharing::Dma)";
const char *const kBroadcastRegComm = "sw::broadcast(Sharing::RegComm)";
const char *const kBroadcastRegCommRow = "sw::broadcast(Sharing::RegCommRow)";
const char *const kBroadcastRegCommColumn = "sw::broadcast(Sharing::RegCommColumn)";
const char *const kBroadcastDmaRow = "sw::broadcast(Sharing::DmaRow)";

void mark(const Func &f, const char *tag) {
    Function fn = f.function();
    for (const std::string &t : fn.get_trace_tags()) {
        if (t == tag)
            return;
    }
    fn.add_trace_tag(tag);
}

/** Adds the directives of \p f to \p d. */
void read_marks(const Function &f, Directives &d) {
    for (const std::string &t : f.get_trace_tags()) {
        if (t == kDoubleBuffer) {
            d.double_buffered.insert(f.name());
        } else if (t == kStageOutput) {
            d.staged_outputs.insert(f.name());
        } else if (t == kSplitPhases) {
            d.phase_split.insert(f.name());
        } else if (t == kPlaceRows) {
            d.rows_placed.insert(f.name());
        } else if (t == kBroadcastDma) {
            d.shared[f.name()] = Sharing::Dma; // the last broadcast tag wins
        } else if (t == kBroadcastRegComm) {
            d.shared[f.name()] = Sharing::RegComm;
        } else if (t == kBroadcastRegCommRow) {
            d.shared[f.name()] = Sharing::RegCommRow;
        } else if (t == kBroadcastRegCommColumn) {
            d.shared[f.name()] = Sharing::RegCommColumn;
        } else if (t == kBroadcastDmaRow) {
            d.shared[f.name()] = Sharing::DmaRow;
        }
    }
}

} // namespace

const char *sharing_name(Sharing how) {
    switch (how) {
    case Sharing::Dma:
        return "Sharing::Dma";
    case Sharing::RegComm:
        return "Sharing::RegComm";
    case Sharing::RegCommRow:
        return "Sharing::RegCommRow";
    case Sharing::RegCommColumn:
        return "Sharing::RegCommColumn";
    case Sharing::DmaRow:
        return "Sharing::DmaRow";
    }
    return "Sharing::?";
}

void double_buffer(const Func &f) {
    mark(f, kDoubleBuffer);
}

void stage_output(const Func &f) {
    mark(f, kStageOutput);
}

void split_phases(const Func &f) {
    mark(f, kSplitPhases);
}

void place_rows(const Func &f) {
    mark(f, kPlaceRows);
}

void broadcast(const Func &f, Sharing how) {
    const char *tag = how == Sharing::Dma          ? kBroadcastDma
                      : how == Sharing::RegComm    ? kBroadcastRegComm
                      : how == Sharing::RegCommRow ? kBroadcastRegCommRow
                      : how == Sharing::DmaRow     ? kBroadcastDmaRow
                                                   : kBroadcastRegCommColumn;
    mark(f, tag);
}

Directives directives_of(const std::map<std::string, Function> &env) {
    Directives d;
    for (const auto &kv : env)
        read_marks(kv.second, d);
    return d;
}

Directives directives_of(const std::vector<Function> &outputs) {
    // Every Function the outputs call, and the wrappers (Func::in) of each with what they
    // call: Halide substitutes the wrappers only when it lowers.
    std::map<std::string, Function> env;
    std::vector<Function> todo(outputs);
    while (!todo.empty()) {
        const Function f = todo.back();
        todo.pop_back();
        if (env.count(f.name()))
            continue;
        env.emplace(f.name(), f);
        for (const auto &kv : Halide::Internal::find_direct_calls(f)) {
            if (!env.count(kv.first))
                todo.push_back(kv.second);
        }
        for (const auto &kv : f.wrappers())
            todo.push_back(Function(kv.second));
    }
    return directives_of(env);
}

Directives directives_of(const Pipeline &p) {
    std::vector<Function> outputs;
    for (const Func &f : p.outputs())
        outputs.push_back(f.function());
    return directives_of(outputs);
}

} // namespace sw
