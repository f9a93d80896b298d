/** \file
 * autoschedule --net: the layers of a built-in network (graph/Networks.h, lowered as sw_net
 * --net lowers it; no weights are made), each as (step name, generator, parameters).
 */
#include "target_sw/Errors.h"

#ifdef SW_AUTOSCHEDULE_WITH_GRAPH
#include "graph/Lowering.h"
#include "graph/Networks.h"
#endif

#include <array>
#include <string>
#include <vector>

std::vector<std::array<std::string, 3>> network_layers(const std::string &net) {
#ifdef SW_AUTOSCHEDULE_WITH_GRAPH
    std::vector<std::array<std::string, 3>> layers;
    try {
        sw_graph::NetworkConfig c;
        c.name = net;
        const sw_graph::Graph g = sw_graph::network_graph(c, nullptr); // shapes only
        const sw_graph::LoweredGraph lg = sw_graph::lower_graph(g);
        for (const sw_graph::Step &s : lg.steps) {
            if (s.layer < 0)
                continue; // a view (the flatten before fc6)
            const sw_graph::LayerSpec &l = lg.layers[size_t(s.layer)];
            std::string params;
            for (const auto &[k, v] : l.params)
                params += (params.empty() ? "" : " ") + k + "=" + v;
            layers.push_back({s.name, l.generator, params});
        }
    } catch (const sw_graph::Error &e) {
        const std::string what = e.what();
        throw sw::UserError(what.rfind("error: ", 0) == 0 ? what.substr(7) : what);
    }
    return layers;
#else
    throw sw::UserError("--net " + net +
                        ": this autoschedule was built without graph/ (the built-in networks are "
                        "graphs; install libonnx-dev and libprotobuf-dev and rebuild)");
#endif
}
