#pragma once
// Reading user inputs (program files, config files, standard input) with a size limit.
//
// An input is user-chosen, so it may be anything at its path: a directory, a FIFO that never gets a
// writer, /dev/zero, or a pipe that never ends. Reading any of them "whole" blocks forever or runs
// until memory is exhausted. These readers accept only a regular file (or standard input), never
// block on opening one, and stop at `maxBytes`, each refusal a sentence that names the input and
// says what to do.
#include <cstdint>
#include <string>

namespace kiln::support {

// 64 MiB: far above any program or config (the largest example is a few KiB).
inline constexpr int64_t kDefaultMaxInputBytes = int64_t(64) << 20;

// $KILN_MAX_INPUT_BYTES when it is a positive byte count, else kDefaultMaxInputBytes.
int64_t maxInputBytes();

// The whole regular file at `path` into `out`; false with the reason in `error` ("'x.kiln' is a
// directory; give a file of text IR").
bool readInputFile(const std::string& path, int64_t maxBytes, std::string& out, std::string& error);

// Everything on file descriptor `fd` (standard input: 0) until its end, into `out`; false with the
// reason in `error` when it is longer than `maxBytes` or cannot be read.
bool readInputStream(int fd, const std::string& name, int64_t maxBytes, std::string& out, std::string& error);

}  // namespace kiln::support
