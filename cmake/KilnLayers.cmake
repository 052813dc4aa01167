# Kiln's layers (DESIGN.md, "Layout and layers"): one static library per folder of src/, each
# linking only the layers below it. The build enforces the order: a layer's sources are compiled
# against an include view (build/layers/<layer>/) that holds only its own folder, the folders of
# the layers below it and the public headers those layers own, so an include from a higher layer
# does not compile. tests/layers/check_layers.py checks the same order on the symbols each library
# needs (nm) and shows that an upward include fails.
#
#   kiln_layer(NAME DEPS <layers below> HEADERS <public headers it owns, under include/kiln/>)

set(KILN_LAYER_VIEWS ${CMAKE_BINARY_DIR}/layers)
set_property(GLOBAL PROPERTY KILN_LAYERS "")

# What every layer shares: the language level, warnings, definitions and header-only libraries.
add_library(kiln_common INTERFACE)
# fmt and nlohmann_json are header-only and used by no public header, so an installed Kiln does
# not pass them on (BUILD_INTERFACE); nor the definitions its sources are compiled with.
target_link_libraries(kiln_common INTERFACE $<BUILD_INTERFACE:fmt::fmt-header-only>
                      $<BUILD_INTERFACE:nlohmann_json::nlohmann_json> Threads::Threads CUDA::toolkit)
target_compile_definitions(kiln_common INTERFACE $<BUILD_INTERFACE:KILN_VERSION="${PROJECT_VERSION}">
                           $<BUILD_INTERFACE:KILN_CUDA_VERSION="${CUDAToolkit_VERSION}">)
if(KILN_VERIFY_BETWEEN_PASSES)
  target_compile_definitions(kiln_common INTERFACE $<BUILD_INTERFACE:KILN_VERIFY_BETWEEN_PASSES=1>)
endif()

function(kiln_layer name)
  cmake_parse_arguments(L "" "" "DEPS;HEADERS" ${ARGN})
  # The layers this one may use: itself and everything below its direct dependencies.
  set(allowed ${name})
  foreach(dep IN LISTS L_DEPS)
    get_property(below GLOBAL PROPERTY KILN_LAYER_ALLOWED_${dep})
    if(NOT below)
      message(FATAL_ERROR "kiln_layer(${name}): layer '${dep}' must be declared before it")
    endif()
    list(APPEND allowed ${below})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set_property(GLOBAL PROPERTY KILN_LAYER_ALLOWED_${name} ${allowed})
  set_property(GLOBAL PROPERTY KILN_LAYER_HEADERS_${name} ${L_HEADERS})
  set_property(GLOBAL APPEND PROPERTY KILN_LAYERS ${name})

  # The include view: symbolic links to the allowed folders and public headers.
  set(view ${KILN_LAYER_VIEWS}/${name})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view}/kiln)
  foreach(layer IN LISTS allowed)
    if(EXISTS ${PROJECT_SOURCE_DIR}/src/${layer})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${layer} ${view}/${layer} SYMBOLIC)
    endif()
    get_property(headers GLOBAL PROPERTY KILN_LAYER_HEADERS_${layer})
    foreach(h IN LISTS headers)
      get_filename_component(dir ${view}/kiln/${h} DIRECTORY)
      file(MAKE_DIRECTORY ${dir})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/kiln/${h} ${view}/kiln/${h} SYMBOLIC)
    endforeach()
  endforeach()

  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  add_library(kiln_${name} STATIC ${sources})
  target_include_directories(kiln_${name} PRIVATE ${view})
  target_compile_options(kiln_${name} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  list(TRANSFORM L_DEPS PREPEND kiln_ OUTPUT_VARIABLE dep_targets)
  target_link_libraries(kiln_${name} PUBLIC kiln_common ${dep_targets})
endfunction()

# Writes build/layers.json (each layer's allowed layers, library, sources and public headers) for
# tests/layers/check_layers.py.
function(kiln_write_layer_map)
  get_property(layers GLOBAL PROPERTY KILN_LAYERS)
  set(json "{\n")
  set(first TRUE)
  foreach(layer IN LISTS layers)
    get_property(allowed GLOBAL PROPERTY KILN_LAYER_ALLOWED_${layer})
    get_property(headers GLOBAL PROPERTY KILN_LAYER_HEADERS_${layer})
    list(JOIN allowed "\", \"" a)
    list(JOIN headers "\", \"" h)
    if(NOT first)
      string(APPEND json ",\n")
    endif()
    set(first FALSE)
    string(APPEND json "  \"${layer}\": {\"allowed\": [\"${a}\"], \"headers\": [\"${h}\"], "
                       "\"library\": \"$<TARGET_FILE:kiln_${layer}>\", \"view\": \"${KILN_LAYER_VIEWS}/${layer}\"}")
  endforeach()
  string(APPEND json "\n}\n")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/layers.json CONTENT "${json}")
endfunction()
