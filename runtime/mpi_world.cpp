#include "runtime/mpi_world.h"

#include <cstdlib>

#include "runtime/error.h"

#if defined(MF_HAVE_MPI)
#include <mpi.h>
#endif

namespace mf {
namespace {

std::optional<int> env_int(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (*end != '\0' || n < 0) return std::nullopt;
  return int(n);
}

}  // namespace

bool launched_by_mpi() {
  for (const char* size : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const auto n = env_int(size)) return *n > 1;
  return env_int("PMIX_RANK").has_value();
}

std::optional<int> launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const auto n = env_int(name)) return n;
  return std::nullopt;
}

bool speaks_for_the_job() { return !launched_by_mpi() || launcher_rank().value_or(0) == 0; }

std::optional<int> launcher_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const auto n = env_int(name)) return n;
  return std::nullopt;
}

#if defined(MF_HAVE_MPI)

namespace {

// A failed MPI call: MPI's own words for it.
void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw SystemError(std::string("MPI: ") + what + ": " + std::string(text, size_t(length)));
}

constexpr int kTag = 17;  // every message of the runner: the ranks exchange in strict turns

}  // namespace

bool built_with_mpi() { return true; }

MpiWorld::MpiWorld() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes (check() turns them into exceptions), not as the default abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw UserError(
        "this MPI gives no funneled threads (MPI_THREAD_FUNNELED), which the ranks' runner needs: its training threads run beside the thread that calls MPI");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

MpiWorld::~MpiWorld() { MPI_Finalize(); }

void MpiWorld::send(int to, const std::string& message) {
  check(MPI_Send(message.data(), int(message.size()), MPI_CHAR, to, kTag, MPI_COMM_WORLD),
        "MPI_Send");
}

std::optional<int> MpiWorld::waiting() {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (!flag) return std::nullopt;
  return status.MPI_SOURCE;
}

std::string MpiWorld::receive(int from) {
  MPI_Status status;
  check(MPI_Probe(from, kTag, MPI_COMM_WORLD, &status), "MPI_Probe");
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string message(size_t(length), '\0');
  check(MPI_Recv(message.data(), length, MPI_CHAR, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
  return message;
}

std::vector<std::string> MpiWorld::gather(const std::string& mine) {
  int length = int(mine.size());
  std::vector<int> lengths(rank_ == 0 ? size_t(size_) : 0), offsets(lengths.size());
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD),
        "MPI_Gather");
  std::string all;
  if (rank_ == 0) {
    for (size_t r = 0; r < lengths.size(); ++r)
      offsets[r] = r == 0 ? 0 : offsets[r - 1] + lengths[r - 1];
    all.resize(size_t(offsets.back() + lengths.back()));
  }
  check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> each;
  for (size_t r = 0; r < lengths.size(); ++r)
    each.push_back(all.substr(size_t(offsets[r]), size_t(lengths[r])));
  return each;
}

std::string MpiWorld::broadcast(const std::string& message) {
  int length = int(message.size());
  check(MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string text = rank_ == 0 ? message : std::string(size_t(length), '\0');
  check(MPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return text;
}

void MpiWorld::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; should it, this rank still ends
}

#else  // a build without MPI: it can tell that a launcher started it, and says so

bool built_with_mpi() { return false; }

MpiWorld::MpiWorld() {
  throw UserError(
      "this multifit was built without MPI, so it cannot train one sweep over the ranks mpirun started; install Open MPI (openmpi-bin, libopenmpi-dev) and build again, or run it without mpirun");
}
MpiWorld::~MpiWorld() = default;
void MpiWorld::send(int, const std::string&) {}
std::optional<int> MpiWorld::waiting() { return std::nullopt; }
std::string MpiWorld::receive(int) { return ""; }
std::vector<std::string> MpiWorld::gather(const std::string&) { return {}; }
std::string MpiWorld::broadcast(const std::string& message) { return message; }
void MpiWorld::abort(int code) { std::_Exit(code); }

#endif

}  // namespace mf
