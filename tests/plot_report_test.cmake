# cmake -DSW_NET=<sw_net> -DPLOT=<scripts/plot_report.py> -DPYTHON=<python> -DWORK=<dir>
#       -P plot_report_test.cmake
# The documented plot command on a real report: sw_net writes the AlexNet report (JSON and
# CSV), scripts/plot_report.py draws the JSON one as PNG and the CSV one as SVG; fails unless
# both are written and are a PNG (signature) and an SVG (<svg element); a report without the
# roofline fields (written before them) is drawn too.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach (pair json:png csv:svg)
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 ext)
    list(GET pair 1 fmt)
    execute_process(COMMAND "${SW_NET}" --net alexnet --no-compare --top 1 --report "${WORK}/alexnet.${ext}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if (NOT rc EQUAL 0)
        message(FATAL_ERROR "sw_net --report ${ext}: exit ${rc}\n${out}")
    endif ()
    set(image "${WORK}/alexnet_${ext}.${fmt}")
    execute_process(COMMAND "${PYTHON}" "${PLOT}" "${WORK}/alexnet.${ext}" -o "${image}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if (NOT rc EQUAL 0 OR NOT EXISTS "${image}")
        message(FATAL_ERROR "plot_report.py ${ext} -> ${fmt}: exit ${rc}\n${out}")
    endif ()
    if (fmt STREQUAL "png")
        file(READ "${image}" head LIMIT 8 HEX)
        if (NOT head STREQUAL "89504e470d0a1a0a")
            message(FATAL_ERROR "${image} is not a PNG (starts with ${head})")
        endif ()
    else ()
        file(STRINGS "${image}" svg REGEX "<svg" LIMIT_COUNT 1)
        if (NOT svg)
            message(FATAL_ERROR "${image} has no <svg element")
        endif ()
    endif ()
endforeach ()
# A report written before the roofline fields (no read_bytes, write_bytes, bound_ms,
# roofline_fraction, bound_by, total): still drawn, JSON and CSV.
file(WRITE "${WORK}/old.json" [=[
{"net": "old", "machine": {"name": "sw26010", "clock_ghz": 1.45, "peak_gflops": 742.4,
 "dma_get_gbps": 28.5, "dma_theoretical_gbps": 34.1},
 "layers": [{"layer": "conv1", "kind": "conv2d", "output": "1x8x4x4", "gflop": 0.5,
  "dma_line_bytes": 1000000, "modelled_ms": 1.0, "gflops": 500.0, "busiest_compute_ms": 0.6,
  "busiest_dma_wait_ms": 0.3, "busiest_sync_wait_ms": 0.0, "busiest_regcomm_wait_ms": 0.0}]}
]=])
file(WRITE "${WORK}/old.csv"
     "net,layer,kind,gflop,dma_line_bytes,modelled_ms,gflops,busiest_compute_ms,busiest_dma_wait_ms,"
     "busiest_sync_wait_ms,busiest_regcomm_wait_ms,machine,machine_peak_gflops,machine_dma_get_gbps,"
     "machine_dma_theoretical_gbps\n"
     "old,conv1,conv2d,0.5,1000000,1.0,500.0,0.6,0.3,0,0,sw26010,742.4,28.5,34.1\n")
foreach (ext json csv)
    execute_process(COMMAND "${PYTHON}" "${PLOT}" "${WORK}/old.${ext}" -o "${WORK}/old_${ext}.png"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if (NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/old_${ext}.png")
        message(FATAL_ERROR "plot_report.py on a report without the roofline fields (${ext}): exit ${rc}\n${out}")
    endif ()
endforeach ()
# A file that is not a report: one error line, exit 1.
file(WRITE "${WORK}/bad.json" "{}")
execute_process(COMMAND "${PYTHON}" "${PLOT}" "${WORK}/bad.json" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if (NOT rc EQUAL 1 OR NOT out MATCHES "^error: .*bad.json: not a sw_net report")
    message(FATAL_ERROR "plot_report.py on a non-report: exit ${rc}\n${out}")
endif ()
