# kiln_embed_text(LAYER FILE SYMBOL): compiles a data file of the source tree (FILE, relative to
# the project) into layer LAYER as `inline constexpr std::string_view SYMBOL` (and SYMBOL##File,
# its path for messages), in a generated header the layer's sources include by the file's name
# with dots as underscores: src/ops/data/gemm_bf16_sm90.variants -> "gemm_bf16_sm90_variants.h".
# Tuning data stays data (reviewed and diffed as text) and the library needs no file at run time.
# An edit of FILE re-runs the configure step, which regenerates the header.
function(kiln_embed_text layer file symbol)
  set(in ${PROJECT_SOURCE_DIR}/${file})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${in})
  file(READ ${in} KILN_EMBED_TEXT)
  if(KILN_EMBED_TEXT MATCHES "\\)kiln_embed\"")
    message(FATAL_ERROR "${file} holds the raw string's delimiter )kiln_embed\"")
  endif()
  get_filename_component(base ${file} NAME)
  string(MAKE_C_IDENTIFIER ${base} id)
  set(KILN_EMBED_SYMBOL ${symbol})
  set(KILN_EMBED_FILE ${file})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/embed_text.h.in ${PROJECT_BINARY_DIR}/generated/${layer}/${id}.h @ONLY)
  target_include_directories(kiln_${layer} PRIVATE ${PROJECT_BINARY_DIR}/generated/${layer})
endfunction()
