#include "backend/disassembler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace kiln::backend {
namespace {
namespace fs = std::filesystem;

// A scratch directory with fake tools: shell scripts that stand in for nvdisasm/cuobjdump.
class DisassemblerSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kiln-disasm-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path tool(const std::string& dir, const std::string& name, const std::string& body,
                bool executable = true) {
    fs::create_directories(root_ / dir);
    fs::path p = root_ / dir / name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    chmod(p.c_str(), executable ? 0755 : 0644);
    return p;
  }

  fs::path root_;
};

TEST_F(DisassemblerSearchTest, NothingFoundSaysWhatToInstall) {
  DisassemblerSearch s;
  s.dirs = {{root_ / "empty", "PATH"}};
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(findDisassembler(s, diag));
  ASSERT_EQ(diag.errorCount(), 1u);
  EXPECT_NE(diag.diagnostics()[0].message.find("pip install nvidia-cuda-nvdisasm"), std::string::npos);
}

TEST_F(DisassemblerSearchTest, PrefersNvdisasmAnywhereThenEarlierDirectories) {
  tool("a", "cuobjdump", "exit 0");
  tool("b", "nvdisasm", "exit 0", /*executable=*/false);  // not executable: skipped
  fs::path c = tool("c", "nvdisasm", "exit 0");
  tool("d", "nvdisasm", "exit 0");
  DisassemblerSearch s;
  s.dirs = {{root_ / "a", "PATH"}, {root_ / "b", "PATH"}, {root_ / "c", "CUDA_HOME"}, {root_ / "d", "python wheel"}};
  ir::DiagnosticEngine diag;
  auto d = findDisassembler(s, diag);
  ASSERT_TRUE(d) << diag.str();
  EXPECT_EQ(d->kind, Disassembler::Kind::Nvdisasm);
  EXPECT_EQ(d->path, c);
  EXPECT_EQ(d->foundVia, "CUDA_HOME");

  s.dirs = {{root_ / "a", "PATH"}};
  d = findDisassembler(s, diag);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, Disassembler::Kind::Cuobjdump);
}

TEST_F(DisassemblerSearchTest, OverrideWinsAndABadOverrideIsAnError) {
  fs::path mine = tool("mine", "my-nvdisasm", "exit 0");
  tool("c", "nvdisasm", "exit 0");
  DisassemblerSearch s;
  s.dirs = {{root_ / "c", "PATH"}};
  s.nvdisasmOverride = mine.string();
  ir::DiagnosticEngine diag;
  auto d = findDisassembler(s, diag);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->path, mine);
  EXPECT_EQ(d->foundVia, "KILN_NVDISASM");

  s.nvdisasmOverride = (root_ / "missing").string();
  EXPECT_FALSE(findDisassembler(s, diag));
  ASSERT_EQ(diag.errorCount(), 1u);
  EXPECT_NE(diag.diagnostics()[0].message.find("KILN_NVDISASM is set to"), std::string::npos);
}

TEST_F(DisassemblerSearchTest, EnvironmentOrder) {
  std::string oldPath = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("KILN_NVDISASM", "/x/nvdisasm", 1);
  setenv("PATH", "/p1:/p2", 1);
  setenv("CUDA_HOME", "/cuda-home", 1);
  DisassemblerSearch s = DisassemblerSearch::fromEnvironment();
  unsetenv("KILN_NVDISASM");
  setenv("PATH", oldPath.c_str(), 1);
  unsetenv("CUDA_HOME");
  EXPECT_EQ(s.nvdisasmOverride, "/x/nvdisasm");
  ASSERT_GE(s.dirs.size(), 4u);
  EXPECT_EQ(s.dirs[0].path, "/p1");
  EXPECT_EQ(s.dirs[1].path, "/p2");
  EXPECT_EQ(s.dirs[2].path, "/cuda-home/bin");
  EXPECT_EQ(s.dirs[3].path, "/usr/local/cuda/bin");
  for (size_t i = 4; i < s.dirs.size(); ++i) EXPECT_EQ(s.dirs[i].via, "python wheel");
}

TEST_F(DisassemblerSearchTest, RunsTheToolOnATemporaryCubinAndRemovesIt) {
  // The fake prints its flag, whether the file exists, and the file's content.
  fs::path fake = tool("t", "nvdisasm", "echo \"flag=$1\"; test -f \"$2\" && echo exists; cat \"$2\"; echo; echo \"$2\"");
  ir::DiagnosticEngine diag;
  auto out = disassemble({Disassembler::Kind::Nvdisasm, fake, "test"}, {'E', 'L', 'F'}, diag);
  ASSERT_TRUE(out) << diag.str();
  EXPECT_TRUE(out->starts_with("flag=-c\nexists\nELF\n")) << *out;
  std::string file = out->substr(out->rfind('\n', out->size() - 2) + 1);
  file.pop_back();
  EXPECT_FALSE(fs::exists(file)) << file << " was left behind";
}

TEST_F(DisassemblerSearchTest, AFailingToolIsADiagnostic) {
  fs::path fake = tool("t", "cuobjdump", "echo 'cuobjdump fatal: bad input' >&2; exit 3");
  ir::DiagnosticEngine diag;
  EXPECT_FALSE(disassemble({Disassembler::Kind::Cuobjdump, fake, "PATH"}, {'x'}, diag));
  ASSERT_EQ(diag.errorCount(), 1u);
  EXPECT_NE(diag.diagnostics()[0].message.find("exit status 3: cuobjdump fatal: bad input"), std::string::npos)
      << diag.str();
}

}  // namespace
}  // namespace kiln::backend
