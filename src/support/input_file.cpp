// Bounded input reading (see input_file.h).
#include "support/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln::support {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

std::string mib(int64_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

int64_t maxInputBytes() {
  const char* v = std::getenv("KILN_MAX_INPUT_BYTES");
  if (!v || !*v) return kDefaultMaxInputBytes;
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v, &end, 10);
  return errno == 0 && *end == '\0' && n > 0 ? static_cast<int64_t>(n) : kDefaultMaxInputBytes;
}

bool readInputStream(int fd, const std::string& name, int64_t maxBytes, std::string& out, std::string& error) {
  out.clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = "cannot read " + name + ": " + std::strerror(errno);
      return false;
    }
    if (n == 0) return true;
    // Stop at the limit, so that an endless stream (`yes |`, /dev/zero) ends in a sentence.
    if (static_cast<int64_t>(out.size()) + n > maxBytes) {
      error = name + " is longer than the input limit of " + mib(maxBytes) +
              "; give a smaller input (or raise KILN_MAX_INPUT_BYTES)";
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

bool readInputFile(const std::string& path, int64_t maxBytes, std::string& out, std::string& error) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise block forever; it is refused below.
  Fd f{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  struct stat st {};
  if (f.fd < 0) {
    int err = errno;
    // A directory cannot always be opened for reading; say what it is rather than "EISDIR".
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      error = "'" + path + "' is a directory; give a file of text IR";
    else if (err == ENOENT || err == EACCES)  // the tools' wording since the first release
      error = "cannot read '" + path + "': no such file, or it is not readable";
    else
      error = "cannot read '" + path + "': " + std::strerror(err);
    return false;
  }
  if (fstat(f.fd, &st) != 0) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "'" + path + "' is " + std::string(kindOf(st.st_mode)) + ", not a regular file; give a file of text IR" +
            (S_ISDIR(st.st_mode) ? "" : " (to read a stream, pipe it to standard input where the verb takes '-')");
    return false;
  }
  if (st.st_size > maxBytes) {
    error = "'" + path + "' is " + std::to_string(st.st_size) + " bytes, over the input limit of " + mib(maxBytes) +
            "; give a smaller input (or raise KILN_MAX_INPUT_BYTES)";
    return false;
  }
  // A regular file never blocks; clear O_NONBLOCK anyway so that no read returns EAGAIN.
  fcntl(f.fd, F_SETFL, fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  // Bounded again while reading: the file may grow after fstat.
  return readInputStream(f.fd, "'" + path + "'", maxBytes, out, error);
}

}  // namespace kiln::support
