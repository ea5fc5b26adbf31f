/// @file archive.hpp
/// @brief Archives as students and learning-management systems hand them over: a `.zip` or a
/// tarball, recognised by its content, checked before it is unpacked, and unpacked with bounds.
///
/// What is refused, before a byte is written: a path that leaves the folder (`../`, an absolute
/// path, a drive letter), a symbolic or hard link, a device or pipe, a password-protected entry,
/// more than UnpackLimits::max_entries entries, more unpacked bytes than UnpackLimits::max_bytes
/// in all or UnpackLimits::max_file_bytes in one file. The tool that unpacks (`unzip`, `tar`) then
/// runs with a time limit and a file-size limit of the largest size the archive declares, so an
/// entry that lies about its size (a zip bomb) is cut off; the unpacked tree is measured again.
#pragma once

#include <string>

namespace convlab::cli {

/// What a file holds, by its first bytes (never by its name).
enum class ArchiveFormat {
  none,     ///< not an archive convlab unpacks
  zip,      ///< a .zip archive (an LMS bulk download is one)
  tarball,  ///< a tar archive, plain or compressed with gzip, bzip2, xz or zstd
};

/// The format of `path` and, in words, what it is: "a .zip archive", "a gzip-compressed tarball",
/// "a PDF document", "a RAR archive (not accepted)", "a text file" ...
ArchiveFormat sniff_archive(const std::string& path, std::string* what = nullptr);

/// Bounds on what one archive may unpack to.
struct UnpackLimits {
  long long max_bytes = 256ll << 20;       ///< unpacked bytes, all entries together
  long long max_file_bytes = 256ll << 20;  ///< unpacked bytes of one entry
  long max_entries = 20000;                ///< files and folders
  double timeout_s = 120;                  ///< the unpacking tool's wall-clock limit
};

/// Unpacks the archive at `path` (a zip or a tarball: sniff_archive) into the folder `dest`,
/// which is created. Returns "" when it worked, else one sentence that says what is wrong with
/// the archive and what to do ("it holds ../../etc/passwd, a path outside its folder: ...").
std::string unpack_archive(const std::string& path, const std::string& dest, const UnpackLimits& limits = {});

/// `name` without an archive's or a repository's extension: "alice.tar.gz" -> "alice",
/// "bob.zip" -> "bob", "carol.git" -> "carol"; other names are returned as they are.
std::string strip_archive_extension(const std::string& name);

}  // namespace convlab::cli
