# write_if_changed(PATH CONTENT): writes CONTENT to PATH unless PATH already holds exactly it,
# so an unchanged generated source keeps its time stamp and nothing that includes it rebuilds.
function(write_if_changed PATH CONTENT)
  if(EXISTS ${PATH})
    file(READ ${PATH} OLD)
    if(OLD STREQUAL CONTENT)
      return()
    endif()
  endif()
  file(WRITE ${PATH} "${CONTENT}")
endfunction()
