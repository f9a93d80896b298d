/** \file
 * The roofline bound of a layer on a machine: the least time the core group's peak and its
 * DMA plateaus allow for the layer's flops and for reading its inputs and writing its outputs
 * once,
 *
 *     bound = max(flops / peak, read bytes / get plateau + write bytes / put plateau)
 *
 * with Machine::cg_peak_gflops(), dma_get_plateau_gbps() and dma_put_plateau_gbps(). What
 * binds it is the larger term: compute, or the byte term, named reads or writes by the larger
 * of its two parts. Header only, no dependency but the machine description: the run reports
 * (runtime/net/report.h) and the autoscheduler's printed plan (apps/autoschedule.cpp) use it.
 */
#ifndef SW_TARGET_ROOFLINE_H
#define SW_TARGET_ROOFLINE_H

#include "target_sw/Machine.h"

namespace sw {

enum class RooflineBinding { Compute, Reads, Writes };

/** "compute", "reads" or "writes". */
inline const char *binding_name(RooflineBinding b) {
    return b == RooflineBinding::Compute ? "compute"
           : b == RooflineBinding::Reads ? "reads"
                                         : "writes";
}

struct Roofline {
    double compute_seconds = 0; ///< flops / peak
    double read_seconds = 0;    ///< read bytes / get plateau
    double write_seconds = 0;   ///< write bytes / put plateau
    double bound_seconds = 0;   ///< max(compute, read + write)
    /** bound / the time achieved (1: at the roofline); 0 when that time is not positive. */
    double fraction = 0;
    RooflineBinding binding = RooflineBinding::Compute; ///< ties go to compute, then reads
};

/** The roofline of \p gflop GFLOP reading \p read_bytes and writing \p write_bytes on \p m,
 * against \p seconds achieved (modelled or predicted). */
inline Roofline roofline(double gflop, double read_bytes, double write_bytes, double seconds,
                         const Machine &m) {
    Roofline r;
    r.compute_seconds = gflop / m.cg_peak_gflops();
    r.read_seconds = read_bytes / (m.dma_get_plateau_gbps() * 1e9);
    r.write_seconds = write_bytes / (m.dma_put_plateau_gbps() * 1e9);
    const double bytes_seconds = r.read_seconds + r.write_seconds;
    if (r.compute_seconds >= bytes_seconds) {
        r.bound_seconds = r.compute_seconds;
        r.binding = RooflineBinding::Compute;
    } else {
        r.bound_seconds = bytes_seconds;
        r.binding =
            r.read_seconds >= r.write_seconds ? RooflineBinding::Reads : RooflineBinding::Writes;
    }
    if (seconds > 0)
        r.fraction = r.bound_seconds / seconds;
    return r;
}

} // namespace sw

#endif
