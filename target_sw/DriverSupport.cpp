#include "target_sw/DriverSupport.h"

namespace sw {

namespace {

/** Halide 14 keeps a generator's parameter list in the private GeneratorBase::param_info().
 * An explicit instantiation may name a private member ([temp.explicit]):
 * ParamInfoAccess is instantiated with its address, which its friend param_info_fn()
 * returns (the driver reads Halide's autoscheduler table the same way). */
using ParamInfoFn = Halide::Internal::GeneratorParamInfo &(Halide::Internal::GeneratorBase::*)();
ParamInfoFn param_info_fn();
template <ParamInfoFn F> struct ParamInfoAccess {
    friend ParamInfoFn param_info_fn() { return F; }
};
template struct ParamInfoAccess<&Halide::Internal::GeneratorBase::param_info>;

} // namespace

bool declares_generator_param(Halide::Internal::GeneratorBase &g, const std::string &name) {
    for (const Halide::Internal::GeneratorParamBase *p :
         (g.*param_info_fn())().generator_params()) {
        if (p->name() == name)
            return true;
    }
    return false;
}

void set_sunway_generator_params(Halide::Internal::GeneratorBase &g,
                                 Halide::Internal::GeneratorParamsMap params, const Machine &m) {
    if (!params.count("machine") && declares_generator_param(g, "machine"))
        params["machine"] = m.name;
    g.set_generator_param_values(params);
}

std::string host_only_warning(const SwFunction &f) {
    if (!f.kernels.empty())
        return "";
    return f.name + " has no CPE kernel: its code runs on the MPE alone (modelled time 0). Give "
                    "the generator a "
                    "Sunway schedule (a loop over the CPEs: gpu_blocks(v, DeviceAPI::Host)) or "
                    "autoschedule it";
}

} // namespace sw
