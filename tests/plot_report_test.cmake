# cmake -DSW_NET=<sw_net> -DPLOT=<scripts/plot_report.py> -DPYTHON=<python> -DWORK=<dir>
#       -P plot_report_test.cmake
# The documented plot command on a real report: sw_net writes the AlexNet report (JSON and
# CSV), scripts/plot_report.py draws the JSON one as PNG and the CSV one as SVG; fails unless
# both are written and are a PNG (signature) and an SVG (<svg element).
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
# A file that is not a report: one error line, exit 1.
file(WRITE "${WORK}/bad.json" "{}")
execute_process(COMMAND "${PYTHON}" "${PLOT}" "${WORK}/bad.json" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if (NOT rc EQUAL 1 OR NOT out MATCHES "^error: .*bad.json: not a sw_net report")
    message(FATAL_ERROR "plot_report.py on a non-report: exit ${rc}\n${out}")
endif ()
