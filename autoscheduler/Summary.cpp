#include "autoscheduler/Summary.h"

#include "target_sw/Errors.h"

#include <iomanip>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>

namespace sw_auto {

namespace {

void write_plan(std::ostream &out, const char *key, const PlanSummary &p) {
    const Estimate &e = p.estimate;
    out << key << " " << e.fits << " " << e.seconds << " " << e.gflops << " " << e.ldm_bytes << " "
        << e.dma_get_bytes << " " << e.dma_put_bytes << " " << e.compute_cycles << " "
        << e.dma_cycles << " " << e.line_bytes << " " << e.tiles << " " << e.compute_cycles_unpaired
        << " " << e.seconds_unpaired << " " << e.gflops_unpaired << " " << p.plan << "\n";
}

PlanSummary read_plan(std::istringstream &in) {
    PlanSummary p;
    Estimate &e = p.estimate;
    in >> e.fits >> e.seconds >> e.gflops >> e.ldm_bytes >> e.dma_get_bytes >> e.dma_put_bytes >>
        e.compute_cycles >> e.dma_cycles >> e.line_bytes >> e.tiles >> e.compute_cycles_unpaired >>
        e.seconds_unpaired >> e.gflops_unpaired;
    in >> std::ws;
    std::getline(in, p.plan);
    return p;
}

} // namespace

Summary summarize(const Result &r) {
    Summary s;
    s.chosen = {r.chosen.plan.describe(), r.chosen.estimate};
    for (const Candidate &c : r.ranked)
        s.ranked.push_back({c.plan.describe(), c.estimate});
    s.passed = r.passed;
    s.considered = r.considered;
    s.lowered = r.lowered;
    for (const Stage &st : r.info.stages) {
        if (st.is_input)
            s.inputs.emplace_back(st.source_name, st.source_extents);
    }
    s.out_extents = r.info.out_extents;
    s.flops = r.info.total_flops;
    s.schedule_source = r.schedule_source;
    return s;
}

void write_summary(const Summary &s, std::ostream &out) {
    out.imbue(std::locale::classic());
    out << std::setprecision(std::numeric_limits<double>::max_digits10);
    out << "considered " << s.considered << "\nlowered " << s.lowered << "\npassed " << s.passed
        << "\n";
    write_plan(out, "plan", s.chosen);
    for (const PlanSummary &p : s.ranked)
        write_plan(out, "ranked", p);
    for (const auto &in : s.inputs) {
        out << "input " << in.first;
        for (int64_t e : in.second)
            out << " " << e;
        out << "\n";
    }
    out << "output";
    for (int64_t e : s.out_extents)
        out << " " << e;
    out << "\nflops " << s.flops;
    out << "\nschedule_source\n" << s.schedule_source;
}

Summary read_summary(std::istream &in, const std::string &what) {
    Summary s;
    bool has_plan = false, has_source = false;
    for (std::string line; std::getline(in, line);) {
        std::istringstream l(line);
        l.imbue(std::locale::classic());
        std::string key;
        l >> key;
        if (key == "considered") {
            l >> s.considered;
        } else if (key == "lowered") {
            l >> s.lowered;
        } else if (key == "passed") {
            l >> s.passed;
        } else if (key == "plan") {
            s.chosen = read_plan(l);
            has_plan = true;
        } else if (key == "ranked") {
            s.ranked.push_back(read_plan(l));
        } else if (key == "input") {
            std::pair<std::string, std::vector<int64_t>> b;
            l >> b.first;
            for (int64_t e; l >> e;)
                b.second.push_back(e);
            s.inputs.push_back(b);
            continue;
        } else if (key == "output") {
            for (int64_t e; l >> e;)
                s.out_extents.push_back(e);
            continue;
        } else if (key == "flops") {
            l >> s.flops;
        } else if (key == "schedule_source") {
            std::ostringstream rest;
            rest << in.rdbuf();
            s.schedule_source = rest.str();
            has_source = true;
            break;
        } else {
            throw sw::UserError(what + ": not an autoscheduler summary (line '" + line + "')");
        }
        if (l.fail())
            throw sw::UserError(what + ": malformed line '" + line + "'");
    }
    if (!has_plan || !has_source)
        throw sw::UserError(what + ": incomplete autoscheduler summary");
    return s;
}

} // namespace sw_auto
