// multifit merge PART... --json OUT: the parts of one sweep, trained apart (run --shard I/N, each a
// task of a job array; a run's journal), made one document as of one run of the sweep
// (study/sweep/merge.h). Exit codes: 0 when every model of the sweep is in some part, 1 when some
// are in none (the document holds the others, and a line names them), 2 for parts that cannot be
// read or do not belong together (the document then holds the error alone, as run's does for a
// sweep it cannot read). A model's own status (failed, diverged) is its part's run's to report: it
// is in the document and the table, and does not change the exit code.
#include <cstdio>
#include <memory>

#include "apps/multifit/cli_values.h"
#include "apps/multifit/commands.h"
#include "apps/multifit/output_files.h"
#include "apps/multifit/summary_table.h"
#include "runtime/error.h"
#include "study/sweep/merge.h"

namespace mf {
namespace {

struct MergeArgs {
  std::vector<std::string> parts;
  OutputFiles files;  // --json and --csv; a merge has no step timelines for a trace
  std::optional<RankBy> rank_by;
};

int run_merge(const MergeArgs& args) {
  if (args.files.json.empty())
    throw UserError(
        "merge needs --json OUT: the merged document is what it makes (- for standard output)");
  std::vector<NamedFile> inputs;
  for (const std::string& part : args.parts) inputs.push_back({"a part", part});
  prepare_output_files(args.files, inputs);
  MergedRun merged;
  try {
    merged = merge_parts(args.parts, args.rank_by);
  } catch (const UserError& e) {
    // the document is written whatever failed: here, with the error alone
    RunReport refused;
    refused.mode = "";  // of no run: no mode
    refused.error = e.what();
    write_output_files({refused}, {args.files.json, "", ""}, 2);
    throw;
  }
  for (const std::string& note : merged.notes)
    std::fprintf(stderr, "multifit: note: %s\n", note.c_str());
  const RunReport& run = merged.run;
  std::printf("\nmerge: %s, %zu of its %zu models from %zu parts, %s mode on %s\n",
              run.sweep->name.c_str(), run.models.size(), run.sweep->models, merged.parts.size(),
              run.mode.c_str(), run.backend.empty() ? "no backend" : run.backend.c_str());
  for (const std::string& part : merged.parts) std::printf("  %s\n", part.c_str());
  print_models_table(run, true);
  int code = 0;
  if (const std::string missing = missing_models_line(merged); !missing.empty()) {
    std::fprintf(stderr, "multifit: error: %s; the document has the other %zu\n", missing.c_str(),
                 run.models.size());
    code = 1;
  }
  return write_output_files({run}, args.files, code);
}

}  // namespace

Command add_merge_command(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Merge the parts of one sweep (run --shard I/N's documents, or journals) into one document, as of one run of the sweep");
  cmd->add_option(
         "parts", args->parts,
         "The parts: result documents of run (one --mode each, not all) or their journals (OUT.journal), e.g. part-*.json")
      ->type_name("FILE")
      ->required();
  // Required, but said by run_merge: CLI11 would say so before it names a mistyped flag (--jsn).
  cmd->add_option("--json", args->files.json,
                  "Write the merged document here (-: standard output); required");
  cmd->add_option("--csv", args->files.csv, "Write one row per model here (-: standard output)");
  cmd->add_option(
         "--rank-by", args->rank_by,
         "Rank the models by this metric (default: as run ranks them, the first of val_accuracy, val_loss, test_accuracy, test_loss, train_s that some model has)")
      ->transform(one_of(kRankByNames));
  return [args] { return run_merge(*args); };
}

}  // namespace mf
