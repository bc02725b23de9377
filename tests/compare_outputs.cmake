# Runs REFERENCE and COMMAND (arguments separated by |; each writes its outputs into its own folder, given as
# REFERENCE_DIR and OUTPUT_DIR) and passes when every dataset in OBJECTS (|-separated "file:object" pairs) is
# identical in both, bit for bit (h5diff without a tolerance).
#   cmake -DREFERENCE=... -DREFERENCE_DIR=... -DCOMMAND=... -DOUTPUT_DIR=... -DOBJECTS=... -DH5DIFF=... -P compare_outputs.cmake
string(REPLACE "|" ";" REFERENCE "${REFERENCE}")
string(REPLACE "|" ";" COMMAND "${COMMAND}")
string(REPLACE "|" ";" OBJECTS "${OBJECTS}")
file(REMOVE_RECURSE "${REFERENCE_DIR}" "${OUTPUT_DIR}")
foreach(run REFERENCE COMMAND)
  execute_process(COMMAND ${${run}} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  message("${out}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "compare_outputs: ${run} failed (${rc})")
  endif()
endforeach()
foreach(pair IN LISTS OBJECTS)
  string(REPLACE ":" ";" parts "${pair}")
  list(GET parts 0 file)
  list(GET parts 1 object)
  execute_process(COMMAND ${H5DIFF} -r "${REFERENCE_DIR}/${file}" "${OUTPUT_DIR}/${file}" "${object}" "${object}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    message("${out}${err}")
    message(FATAL_ERROR "compare_outputs: ${file}:${object} differs from the reference run")
  endif()
  message("compare_outputs: ${file}:${object} identical")
endforeach()
