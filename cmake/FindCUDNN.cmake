#[=======================================================================[.rst:
FindCUDNN
---------

Finds NVIDIA cuDNN (the header ``cudnn.h`` and the library ``libcudnn.so``).

Where it looks, in order:

1. ``CUDNN_ROOT`` (a CMake variable, else the environment variable). When it
   is set, it is the only place searched (``include/``, ``lib64/``, ``lib/``
   and their ``x86_64-linux-gnu`` subfolders): a root that does not hold
   cuDNN gives "not found" rather than silently picking another install.
2. The CUDA toolkit's own folders: ``CUDAToolkit_INCLUDE_DIRS`` and
   ``CUDAToolkit_LIBRARY_DIR`` when ``find_package(CUDAToolkit)`` ran before,
   then ``/usr/local/cuda``.
3. Debian/Ubuntu's multiarch folders ``/usr/include/x86_64-linux-gnu`` and
   ``/usr/lib/x86_64-linux-gnu`` (where the cuDNN 9 .deb packages install).
4. CMake's default search paths.

The version is read from ``cudnn_version.h`` (or ``cudnn_version_v9.h``)
beside ``cudnn.h``. When a version is asked for (``find_package(CUDNN 9)``),
cuDNN 9 or newer is required on top of that check: the convlab wrapper uses
the cuDNN 9 library layout and status codes.

Imported target
^^^^^^^^^^^^^^^

``CUDNN::cudnn``
  The cuDNN library (``IMPORTED_LOCATION``) with its include folder
  (``INTERFACE_INCLUDE_DIRECTORIES``). ``cudnn.h`` includes
  ``cuda_runtime_api.h``: link ``CUDA::cudart`` too.

Result variables
^^^^^^^^^^^^^^^^

``CUDNN_FOUND``
``CUDNN_INCLUDE_DIRS``
``CUDNN_LIBRARIES``
``CUDNN_VERSION`` (``MAJOR.MINOR.PATCH``)
``CUDNN_VERSION_MAJOR``, ``CUDNN_VERSION_MINOR``, ``CUDNN_VERSION_PATCH``

Cache variables
^^^^^^^^^^^^^^^

``CUDNN_INCLUDE_DIR`` and ``CUDNN_LIBRARY`` (advanced). They are cleared and
searched again when ``CUDNN_ROOT`` changes between configure runs.
#]=======================================================================]

include(FindPackageHandleStandardArgs)

# --- Where to look ------------------------------------------------------------
set(_cudnn_root "")
if(DEFINED CUDNN_ROOT AND NOT "${CUDNN_ROOT}" STREQUAL "")
  set(_cudnn_root "${CUDNN_ROOT}")
elseif(DEFINED ENV{CUDNN_ROOT} AND NOT "$ENV{CUDNN_ROOT}" STREQUAL "")
  set(_cudnn_root "$ENV{CUDNN_ROOT}")
endif()

# A cached result from an earlier run with another root would otherwise stick.
if(DEFINED _CUDNN_ROOT_LAST_SEARCHED AND
   NOT "${_CUDNN_ROOT_LAST_SEARCHED}" STREQUAL "${_cudnn_root}")
  unset(CUDNN_INCLUDE_DIR CACHE)
  unset(CUDNN_LIBRARY CACHE)
endif()
set(_CUDNN_ROOT_LAST_SEARCHED "${_cudnn_root}" CACHE INTERNAL
    "CUDNN_ROOT used by the last FindCUDNN search")

set(_cudnn_include_suffixes include include/x86_64-linux-gnu)
set(_cudnn_lib_suffixes lib64 lib lib/x64 lib/x86_64-linux-gnu)
# Newer pip wheels (nvidia-cudnn-cu*) ship libcudnn.so.9 without the
# libcudnn.so development link.
set(_cudnn_lib_names cudnn libcudnn.so.9)

if(_cudnn_root)
  find_path(CUDNN_INCLUDE_DIR NAMES cudnn.h
    PATHS "${_cudnn_root}" PATH_SUFFIXES ${_cudnn_include_suffixes}
    NO_DEFAULT_PATH)
  find_library(CUDNN_LIBRARY NAMES ${_cudnn_lib_names}
    PATHS "${_cudnn_root}" PATH_SUFFIXES ${_cudnn_lib_suffixes}
    NO_DEFAULT_PATH)
else()
  set(_cudnn_include_hints "")
  set(_cudnn_lib_hints "")
  if(CUDAToolkit_INCLUDE_DIRS)
    list(APPEND _cudnn_include_hints ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  if(CUDAToolkit_LIBRARY_DIR)
    list(APPEND _cudnn_lib_hints "${CUDAToolkit_LIBRARY_DIR}")
  endif()
  list(APPEND _cudnn_include_hints
    /usr/local/cuda/include /usr/include/x86_64-linux-gnu)
  list(APPEND _cudnn_lib_hints
    /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu)

  find_path(CUDNN_INCLUDE_DIR NAMES cudnn.h HINTS ${_cudnn_include_hints})
  find_library(CUDNN_LIBRARY NAMES ${_cudnn_lib_names} HINTS ${_cudnn_lib_hints})
  unset(_cudnn_include_hints)
  unset(_cudnn_lib_hints)
endif()
mark_as_advanced(CUDNN_INCLUDE_DIR CUDNN_LIBRARY)

# --- Version ------------------------------------------------------------------
set(CUDNN_VERSION "")
set(CUDNN_VERSION_MAJOR "")
set(CUDNN_VERSION_MINOR "")
set(CUDNN_VERSION_PATCH "")
if(CUDNN_INCLUDE_DIR)
  # cuDNN >= 8 keeps the numbers in cudnn_version.h; Debian's packages name it
  # cudnn_version_v<major>.h behind an alternatives link; cuDNN 7 used cudnn.h.
  foreach(_cudnn_header cudnn_version.h cudnn_version_v9.h cudnn.h)
    set(_cudnn_header_path "${CUDNN_INCLUDE_DIR}/${_cudnn_header}")
    if(NOT EXISTS "${_cudnn_header_path}")
      continue()
    endif()
    file(STRINGS "${_cudnn_header_path}" _cudnn_defines
      REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
    foreach(_cudnn_part MAJOR MINOR PATCHLEVEL)
      if(_cudnn_defines MATCHES "#define CUDNN_${_cudnn_part} +([0-9]+)")
        set(_cudnn_${_cudnn_part} "${CMAKE_MATCH_1}")
      else()
        unset(_cudnn_${_cudnn_part})
      endif()
    endforeach()
    if(DEFINED _cudnn_MAJOR AND DEFINED _cudnn_MINOR AND DEFINED _cudnn_PATCHLEVEL)
      set(CUDNN_VERSION_MAJOR "${_cudnn_MAJOR}")
      set(CUDNN_VERSION_MINOR "${_cudnn_MINOR}")
      set(CUDNN_VERSION_PATCH "${_cudnn_PATCHLEVEL}")
      set(CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")
      break()
    endif()
  endforeach()
  unset(_cudnn_header)
  unset(_cudnn_header_path)
  unset(_cudnn_defines)
  unset(_cudnn_part)
  unset(_cudnn_MAJOR)
  unset(_cudnn_MINOR)
  unset(_cudnn_PATCHLEVEL)
endif()

# When a version was asked for, anything older than cuDNN 9 is refused even if
# the request itself was lower (e.g. find_package(CUDNN 8)).
set(_cudnn_required_vars CUDNN_LIBRARY CUDNN_INCLUDE_DIR)
set(_cudnn_reason "")
if(CUDNN_FIND_VERSION AND CUDNN_VERSION)
  set(CUDNN_VERSION_IS_9_OR_NEWER TRUE)
  list(APPEND _cudnn_required_vars CUDNN_VERSION_IS_9_OR_NEWER)
endif()
if(CUDNN_FIND_VERSION AND CUDNN_VERSION AND CUDNN_VERSION_MAJOR LESS 9)
  set(CUDNN_VERSION_IS_9_OR_NEWER FALSE)
  set(_cudnn_reason "cuDNN ${CUDNN_VERSION} in ${CUDNN_INCLUDE_DIR} is too old: convlab needs cuDNN 9 or newer.")
endif()
if(_cudnn_root AND NOT (CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY))
  string(APPEND _cudnn_reason " Searched only CUDNN_ROOT=${_cudnn_root} (its include/ and lib*/ folders).")
endif()
string(STRIP "${_cudnn_reason}" _cudnn_reason)

find_package_handle_standard_args(CUDNN
  REQUIRED_VARS ${_cudnn_required_vars}
  VERSION_VAR CUDNN_VERSION
  HANDLE_VERSION_RANGE
  REASON_FAILURE_MESSAGE "${_cudnn_reason}")
unset(_cudnn_required_vars)
unset(CUDNN_VERSION_IS_9_OR_NEWER)
unset(_cudnn_reason)
unset(_cudnn_root)
unset(_cudnn_include_suffixes)
unset(_cudnn_lib_suffixes)
unset(_cudnn_lib_names)

# --- Results --------------------------------------------------------------------
if(CUDNN_FOUND)
  set(CUDNN_INCLUDE_DIRS "${CUDNN_INCLUDE_DIR}")
  set(CUDNN_LIBRARIES "${CUDNN_LIBRARY}")
  if(NOT TARGET CUDNN::cudnn)
    add_library(CUDNN::cudnn SHARED IMPORTED)
    set_target_properties(CUDNN::cudnn PROPERTIES
      IMPORTED_LOCATION "${CUDNN_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
  endif()
endif()
