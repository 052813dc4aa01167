// Bounded input reading: every kind of thing that may sit at an input's path ends in a sentence,
// never a block or an unbounded read.
#include "support/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kiln::support {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("kiln-input-test-" + std::to_string(getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string errorOf(const std::string& path, int64_t limit = kDefaultMaxInputBytes) {
  std::string out, error;
  EXPECT_FALSE(readInputFile(path, limit, out, error)) << path;
  return error;
}

TEST(InputFile, ReadsARegularFileWhole) {
  TempDir d;
  std::ofstream(d.path / "p.kiln") << "hello";
  std::string out, error;
  ASSERT_TRUE(readInputFile((d.path / "p.kiln").string(), 5, out, error)) << error;
  EXPECT_EQ(out, "hello");
}

TEST(InputFile, RefusesWhatIsNotARegularFile) {
  TempDir d;
  std::string fifo = (d.path / "f").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Opening a FIFO with no writer blocked forever before the fix.
  EXPECT_EQ(errorOf(fifo), "'" + fifo + "' is a FIFO (named pipe), not a regular file; give a file of text IR (to read "
                               "a stream, pipe it to standard input where the verb takes '-')");
  EXPECT_EQ(errorOf(d.path.string()), "'" + d.path.string() + "' is a directory, not a regular file; give a file of text IR");
  EXPECT_EQ(errorOf("/dev/zero").substr(0, 33), "'/dev/zero' is a device, not a re");
  EXPECT_EQ(errorOf((d.path / "missing").string()), "cannot read '" + (d.path / "missing").string() +
                                                           "': no such file, or it is not readable");
}

TEST(InputFile, RefusesAFileOverTheLimit) {
  TempDir d;
  std::ofstream(d.path / "big") << std::string(2 << 20, 'x');
  EXPECT_EQ(errorOf((d.path / "big").string(), int64_t(1) << 20),
            "'" + (d.path / "big").string() + "' is 2097152 bytes, over the input limit of 1 MiB; give a smaller "
                                              "input (or raise KILN_MAX_INPUT_BYTES)");
}

TEST(InputFile, AStreamStopsAtTheLimit) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string chunk(4096, 'y');
  ASSERT_EQ(write(fds[1], chunk.data(), chunk.size()), ssize_t(chunk.size()));
  // The writer stays open: an endless stream, which only the limit ends.
  std::string out, error;
  EXPECT_FALSE(readInputStream(fds[0], "standard input", 1000, out, error));
  EXPECT_EQ(error, "standard input is longer than the input limit of 1000 bytes; give a smaller input (or raise "
                   "KILN_MAX_INPUT_BYTES)");
  close(fds[1]);
  EXPECT_TRUE(readInputStream(fds[0], "standard input", 1 << 20, out, error));
  close(fds[0]);
}

}  // namespace
}  // namespace kiln::support
