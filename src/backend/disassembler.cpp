#include "backend/disassembler.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "backend/subprocess.h"

namespace kiln::backend {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

// The bin/ folders of NVIDIA's wheels for every `nvidia` namespace-package path python3 knows;
// nullopt when python3 could not be started at all.
std::optional<std::vector<fs::path>> pythonWheelBinDirs() {
  auto r = runProcess({"python3", "-c",
                       "import nvidia\nfor p in nvidia.__path__: print(p)"});
  if (!r) return std::nullopt;
  std::vector<fs::path> dirs;
  if (r->exitCode != 0) return dirs;  // no `nvidia` package: a real answer
  std::string_view out = r->out;
  while (!out.empty()) {
    size_t nl = out.find('\n');
    std::string_view line = out.substr(0, nl);
    out = nl == std::string_view::npos ? std::string_view{} : out.substr(nl + 1);
    if (line.empty()) continue;
    fs::path root(line);
    for (const char* sub : {"cu13/bin", "cu12/bin", "cuda_nvdisasm/bin", "cuda_cuobjdump/bin"})
      dirs.push_back(root / sub);
  }
  return dirs;
}

// Asked once per process, but only an answer is kept: when python3 could not be started (say,
// PATH did not reach it) a later search asks again.
std::vector<fs::path> cachedPythonWheelBinDirs() {
  static std::mutex mutex;
  static std::optional<std::vector<fs::path>> cached;
  std::lock_guard lock(mutex);
  if (!cached) cached = pythonWheelBinDirs();
  return cached.value_or(std::vector<fs::path>{});
}

}  // namespace

DisassemblerSearch DisassemblerSearch::fromEnvironment() {
  DisassemblerSearch s;
  s.nvdisasmOverride = env("KILN_NVDISASM");
  s.cuobjdumpOverride = env("KILN_CUOBJDUMP");
  if (auto path = env("PATH")) {
    std::string_view rest = *path;
    while (true) {
      size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) s.dirs.push_back({fs::path(dir), "PATH"});
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (auto home = env("CUDA_HOME")) s.dirs.push_back({fs::path(*home) / "bin", "CUDA_HOME"});
  s.dirs.push_back({"/usr/local/cuda/bin", "/usr/local/cuda"});
  for (const fs::path& d : cachedPythonWheelBinDirs()) s.dirs.push_back({d, "python wheel"});
  return s;
}

std::optional<Disassembler> findDisassembler(const DisassemblerSearch& s, ir::DiagnosticEngine& diag) {
  using Kind = Disassembler::Kind;
  const std::pair<const std::optional<std::string>*, std::pair<Kind, const char*>> overrides[] = {
      {&s.nvdisasmOverride, {Kind::Nvdisasm, "KILN_NVDISASM"}},
      {&s.cuobjdumpOverride, {Kind::Cuobjdump, "KILN_CUOBJDUMP"}}};
  for (const auto& [value, what] : overrides) {
    if (!*value) continue;
    if (!isExecutableFile(**value)) {
      diag.error(ir::Location::unknown())
          << what.second << " is set to '" << **value << "', which is not an executable file; "
          << "point it at nvdisasm (pip install nvidia-cuda-nvdisasm) or unset it";
      return std::nullopt;
    }
    return Disassembler{what.first, fs::path(**value), what.second};
  }
  for (auto [kind, name] : {std::pair{Kind::Nvdisasm, "nvdisasm"}, std::pair{Kind::Cuobjdump, "cuobjdump"}})
    for (const auto& dir : s.dirs)
      if (isExecutableFile(dir.path / name)) return Disassembler{kind, dir.path / name, dir.via};

  diag.error(ir::Location::unknown())
      << "no SASS disassembler found: looked for nvdisasm and cuobjdump in $KILN_NVDISASM, "
         "$KILN_CUOBJDUMP, $PATH, $CUDA_HOME/bin, /usr/local/cuda/bin and NVIDIA's Python wheels; "
         "install one with `pip install nvidia-cuda-nvdisasm` or set KILN_NVDISASM to its path";
  return std::nullopt;
}

std::optional<Disassembler> findDisassembler(ir::DiagnosticEngine& diag) {
  return findDisassembler(DisassemblerSearch::fromEnvironment(), diag);
}

std::optional<std::string> disassemble(const Disassembler& tool, const std::vector<char>& cubin,
                                       ir::DiagnosticEngine& diag) {
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string name = (dir / "kiln-sass-XXXXXX.cubin").string();
  int fd = mkstemps(name.data(), 6);
  if (fd < 0) {
    diag.error(ir::Location::unknown()) << "cannot create a temporary file in " << dir.string()
                                        << " to disassemble a cubin";
    return std::nullopt;
  }
  size_t written = 0;
  while (written < cubin.size()) {
    ssize_t n = write(fd, cubin.data() + written, cubin.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(fd);
  std::optional<ProcessResult> r;
  if (written == cubin.size()) {
    std::vector<std::string> argv = {tool.path.string()};
    if (tool.kind == Disassembler::Kind::Nvdisasm) argv.push_back("-c");  // code sections only
    else argv.push_back("-sass");
    argv.push_back(name);
    r = runProcess(argv);
  }
  fs::remove(name, ec);
  if (written != cubin.size()) {
    diag.error(ir::Location::unknown()) << "cannot write the cubin to " << name << " to disassemble it";
    return std::nullopt;
  }
  if (!r || r->exitCode != 0) {
    diag.error(ir::Location::unknown())
        << tool.path.string() << " (found via " << tool.foundVia << ") failed"
        << (r ? " with exit status " + std::to_string(r->exitCode) + ": " + r->err : " to start");
    return std::nullopt;
  }
  return std::move(r->out);
}

}  // namespace kiln::backend
