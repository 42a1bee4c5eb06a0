# Embeds every file under kernels_templates/ into the library as bytes, so an installed program
# needs no source tree. tilejit_embed_templates(<out.cpp> <root> <files...>)
function(tilejit_embed_templates out root)
  set(files ${ARGN})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DROOT=${root} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedTemplatesScript.cmake
    DEPENDS ${PROJECT_SOURCE_DIR}/cmake/EmbedTemplatesScript.cmake ${files}
    COMMENT "Embedding ${root} into the library"
    VERBATIM)
endfunction()
