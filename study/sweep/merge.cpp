#include "study/sweep/merge.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "runtime/error.h"
#include "runtime/input_file.h"
#include "runtime/names.h"
#include "runtime/json_forms.h"
#include "study/sweep/journal.h"
#include "study/rank_path.h"
#include "study/report/combine_parts.h"
#include "runtime/formats.h"

namespace mf {
namespace {

using nlohmann::json;

// A part is read whole: a document of a sweep's most models (2^20, a few KiB each) is some GiB, and
// a bound keeps a device or a pipe from being read forever (runtime/input_file.h).
constexpr uintmax_t kMaxPartBytes = uintmax_t(16) << 30;

// One part as read, checked on its own: a document read whole (from_json), or a journal's header
// (its sweep, shard, backend and mode) and models, its run's figures left as they are by default,
// unread: a journal times nothing of its run.
struct Part {
  std::string path;
  bool journal = false;
  RunReport run;  // backend, mode: "" when unknown (a run whose models never reached a backend, a
                  // journal of --mode auto killed before it chose)
};

std::string model_words(const ModelReport& m) {
  return "model #" + std::to_string(m.index) + " '" + m.name + "'";
}

// Throws UserError unless `doc` is a document of one run of a sweep.
void check_document(const std::string& path, const json& doc) {
  if (!doc.is_object())
    throw UserError(path + ": not a multifit result document (JSON, but " +
                    std::string(doc.type_name()) +
                    ", not an object): give run's --json documents or their journals");
  if (doc.contains("runs")) {
    const std::string modes =
        !doc["runs"].is_array() ? "" : joined(doc["runs"], [](const json& run) {
          return run.is_object() ? run.value("mode", std::string("?")) : std::string("?");
        });
    throw UserError(
        path + ": a document of " + std::to_string(doc["runs"].size()) + " runs (" + modes +
        "; --mode all or --repeat): merge takes documents of one run; run every shard once, with one of --mode serial, streams, processes or packed (or auto)");
  }
  if (!doc.contains("models") || !doc["models"].is_array() || !doc.contains("mode"))
    throw UserError(
        path +
        ": not a multifit result document (no models and mode): give run's --json documents or their journals");
  if (!doc.contains("sweep"))
    throw UserError(
        path +
        ": a document that does not name its sweep (field sweep): written by a multifit from before --shard; merge takes documents of this version");
  if (doc["sweep"].is_null()) {
    const std::string error =
        doc.value("error", json()).is_string() ? doc["error"].get<std::string>() : "";
    throw UserError(
        path + (error.empty()
                    ? ": a document of no sweep (multifit train's): merge takes run's documents"
                    : ": a run that failed before it had its sweep (its error: " + error + ")"));
  }
}

// The run of document `doc`, read as run wrote it: its fields, then its models one by one, so that
// a model that cannot be read is named by its place.
void read_document(Part& part, json doc) {
  check_document(part.path, doc);
  json models = std::move(doc["models"]);
  doc["models"] = json::array();
  try {
    part.run = doc.get<RunReport>();
  } catch (const std::exception& e) {
    throw UserError(part.path + ": cannot be read as a run's document: " + without_tag(e.what()));
  }
  for (size_t i = 0; i < models.size(); ++i) {
    try {
      part.run.models.push_back(models[i].get<ModelReport>());
    } catch (const std::exception& e) {
      throw UserError(part.path + ": models[" + std::to_string(i) +
                      "] cannot be read: " + without_tag(e.what()));
    }
  }
}

void read_journal_part(Part& part, const std::string& text, std::vector<std::string>& notes) {
  const std::string& path = part.path;
  const JournalLines journal = parse_journal(path, text);
  const JournalRun& header = journal.header.run;
  if (header.sweep.fingerprint.empty())
    throw UserError(
        path +
        ":1: a journal that does not name its sweep (written by a multifit from before --shard): finish its run with --resume, which writes a document, and merge that");
  part.run.sweep = header.sweep;
  part.run.shard = header.shard;
  part.run.backend = header.backend;
  part.run.mode = header.mode;
  std::string& mode = part.run.mode;
  if (mode == "all")
    throw UserError(
        path +
        ":1: the journal of a --mode all run: merge takes parts of one mode; run every shard with one of --mode serial, streams, processes or packed (or auto)");
  // --mode auto: the mode it chose; none yet when it was killed in its calibration, which journals
  // nothing.
  if (mode == "auto")
    mode = journal.auto_choice.is_object() ? journal.auto_choice.value("mode", "") : "";
  std::map<size_t, const JournalModelLine*> last;  // a model's later line supersedes an earlier one
  size_t other_modes = 0;
  for (const JournalModelLine& line : journal.models) {
    if (line.mode != mode) {
      ++other_modes;  // --solo's runs alone, the baseline of its slowdowns
      continue;
    }
    last[line.index] = &line;
  }
  for (const auto& [index, line] : last) {
    ModelReport m = line->ended.report;
    if (m.index != index || m.name != line->name)
      throw UserError(path + ":" + std::to_string(line->line) + ": model #" +
                      std::to_string(index) + " '" + line->name + "' has the report of #" +
                      std::to_string(m.index) + " '" + m.name + "'");
    part.run.models.push_back(std::move(m));
  }
  if (other_modes > 0)
    notes.push_back(path + ": " + std::to_string(other_modes) +
                    " model lines of another mode than its run's " + mode +
                    " (--solo's runs alone) left out");
  if (journal.cut_line > 0)
    notes.push_back(
        path + ":" + std::to_string(journal.cut_line) +
        ": cut short, as a runner killed while writing it leaves it: its model is not in the merge");
}

// Each model where the part says it is: in the sweep, in its shard, once.
void check_places(const Part& part) {
  const std::string& path = part.path;
  const SweepIdentity& sweep = *part.run.sweep;
  const std::optional<Shard>& shard = part.run.shard;
  std::set<size_t> seen;
  for (const ModelReport& m : part.run.models) {
    if (m.index >= sweep.models)
      throw UserError(path + ": " + model_words(m) + " is past the sweep's " +
                      std::to_string(sweep.models) + " models: a broken part");
    if (shard && m.index % shard->count != shard->index)
      throw UserError(path + ": " + model_words(m) + " is not of " + shard_words(shard) +
                      " (its places are " + std::to_string(shard->index) + ", " +
                      std::to_string(shard->index + shard->count) + ", ...): a broken part");
    if (!seen.insert(m.index).second)
      throw UserError(path + ": " + model_words(m) + " is in it twice: a broken part");
  }
}

Part read_part(const std::string& path, std::vector<std::string>& notes) {
  check_input_file(path, "part to merge", kMaxPartBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot be read: " + std::string(std::strerror(errno)));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Part part;
  part.path = path;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw UserError(path + ": empty: not a multifit result document or journal");
  // A journal's first line is its header, one JSON object; a document's is "{" alone.
  const std::string first = text.substr(0, text.find('\n'));
  if (is_journal_header(json::parse(first, nullptr, false))) {
    part.journal = true;
    read_journal_part(part, text, notes);
  } else {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::exception& e) {  // a syntax error, or a number past a double's range
      throw UserError(path + ": not JSON (" + without_tag(e.what()) +
                      "): give run's --json documents or their journals");
    }
    read_document(part, std::move(doc));
  }
  check_places(part);
  return part;
}

std::string identity_words(const SweepIdentity& s) {
  return "'" + s.name + "' of " + std::to_string(s.models) + " models";
}

// Refuses `part` where it is of another sweep than `first`, the first part.
void check_same_sweep(const Part& part, const Part& first) {
  const SweepIdentity &sweep = *part.run.sweep, &first_sweep = *first.run.sweep;
  if (sweep.name != first_sweep.name || sweep.models != first_sweep.models)
    throw UserError(part.path + ": a part of the sweep " + identity_words(sweep) + ", but " +
                    first.path + " is of " + identity_words(first_sweep) +
                    ": parts of another sweep");
  if (sweep.fingerprint != first_sweep.fingerprint)
    throw UserError(
        part.path + ": a part of the sweep " + identity_words(sweep) + " as " + first.path +
        " is, but its models' specs differ (fingerprint " + sweep.fingerprint + ", " + first.path +
        "'s " + first_sweep.fingerprint +
        "): another sweep file of that name, or other overrides (--epochs, --learning-rate, --seed, --batch-size, --memory-limit, --memory); run every part with the same ones");
}

// Refuses `part` where it does not belong with the parts before it (`typed`: the first that has a
// model, whose backend and mode the others must share; none yet: nullptr).
void check_belongs(const Part& part, const Part* typed, const std::vector<Part>& before) {
  const std::string& path = part.path;
  check_same_sweep(part, before.front());
  const RunReport& run = part.run;
  if (typed && !run.models.empty()) {
    const RunReport& their = typed->run;
    if (!run.backend.empty() && !their.backend.empty() && run.backend != their.backend)
      throw UserError(path + ": trained on the " + run.backend + " backend, but " + typed->path +
                      " on the " + their.backend + " backend: merge takes parts of one backend");
    if (!run.mode.empty() && !their.mode.empty() && run.mode != their.mode)
      throw UserError(
          path + ": a run in " + run.mode + " mode, but " + typed->path + " in " + their.mode +
          " mode: merge takes parts of one mode (run every shard with the same --mode; with auto each shard chooses its own)");
  }
  // The journals of one run's MPI ranks (PATH, PATH.rank-R) are one part, each with its own models.
  const auto of_one_run = [](const Part& a, const Part& b) {
    return a.journal && b.journal && rank_sibling_base(a.path) == rank_sibling_base(b.path);
  };
  if (run.shard)
    for (const Part& other : before)
      if (other.run.shard && other.run.shard->index == run.shard->index &&
          other.run.shard->count == run.shard->count && !of_one_run(part, other))
        throw UserError(
            path + ": " + shard_words(run.shard) + ", as " + other.path +
            " is: each part once (a shard's journal and its document are one part: give one of them)");
}

// Refuses `part` where one of its models is in a part before it: a model twice, or another model at
// its place. `owner`: each model's place in the sweep -> its part, this one's added.
void check_no_overlap(const Part& part, const std::vector<Part>& before,
                      std::map<size_t, size_t>& owner) {
  for (const ModelReport& m : part.run.models) {
    const auto [at, fresh] = owner.emplace(m.index, before.size());
    if (fresh) continue;
    const Part& other = before[at->second];
    const std::vector<ModelReport>& theirs = other.run.models;
    const ModelReport& their = *std::find_if(
        theirs.begin(), theirs.end(), [&](const ModelReport& o) { return o.index == m.index; });
    if (their.name != m.name)
      throw UserError(part.path + ": model #" + std::to_string(m.index) + " is '" + m.name +
                      "', but in " + other.path + " it is '" + their.name +
                      "': parts of another sweep");
    throw UserError(part.path + ": " + model_words(m) + " is in " + other.path +
                    " too: parts must not overlap (each model in one part)");
  }
}

// "host-a", or "host-a, host-b" for a part whose models ran on several machines.
std::string hosts_of(const Part& part) {
  std::vector<std::string> hosts;
  for (const ModelReport& m : part.run.models)
    if (!m.host.empty() && std::find(hosts.begin(), hosts.end(), m.host) == hosts.end())
      hosts.push_back(m.host);
  return joined(hosts, [](const std::string& host) { return host; });
}

// The part's line under the merge's `shards` and the figures of its run, as its document has them
// (its place: its shard's I, or for no shard its place among the parts); a journal timed nothing of
// its run. A document has no count of the rows its run trained: a merge makes no throughput of
// parts run apart.
PartFigures figures_of(const Part& part, size_t place) {
  const RunReport& run = part.run;
  PartFigures f;
  f.line.index = run.shard ? int(run.shard->index) : int(place);
  f.line.host = hosts_of(part);
  f.line.models = int(run.models.size());
  if (part.journal) return f;
  f.line.wall_s = run.wall_s;
  f.line.startup_s = run.startup_s;
  f.line.samples_per_s = run.samples_per_s;
  f.train_s = run.train_s;
  f.concurrency = run.concurrency;
  f.concurrency_reason = run.concurrency_reason;
  f.training_threads = run.training_threads;
  f.host_peak_rss_bytes = run.host_peak_rss_bytes;
  f.workers_peak_rss_bytes = run.workers_peak_rss_bytes;
  f.resumed_models = run.resumed_models;
  return f;
}

std::string part_line(const Part& part, const RunPart& figures) {
  std::string line =
      part.path + " (" + (part.journal ? "journal, " : "") + shard_words(part.run.shard) +
      (figures.host.empty() ? "" : " on " + figures.host) + "): " + std::to_string(figures.models) +
      " model" + (figures.models == 1 ? "" : "s");
  if (figures.wall_s) line += ", wall " + format_duration(*figures.wall_s);
  if (figures.samples_per_s)
    line += ", " + std::to_string(int64_t(std::llround(*figures.samples_per_s))) + " samples/s";
  return line;
}

// Reads `paths`, each part checked on its own and against those before it (merge_parts's throws).
std::vector<Part> read_parts(const std::vector<std::string>& paths,
                             std::vector<std::string>& notes) {
  // The same file twice, under two names or one: found before anything is read.
  for (size_t i = 0; i < paths.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      std::error_code error;
      if (paths[i] == paths[j] || std::filesystem::equivalent(paths[i], paths[j], error))
        throw UserError(paths[i] + " and " + paths[j] + " are the same file: give each part once");
    }
  std::vector<Part> parts;
  std::optional<size_t> typed;  // the first part with a model: its backend and mode are the merge's
  std::map<size_t, size_t> owner;  // each model's place in the sweep -> its part
  for (const std::string& path : paths) {
    Part part = read_part(path, notes);
    if (!parts.empty()) check_belongs(part, typed ? &parts[*typed] : nullptr, parts);
    check_no_overlap(part, parts, owner);
    if (!typed && !part.run.models.empty()) typed = parts.size();
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace

MergedRun merge_parts(const std::vector<std::string>& paths, std::optional<RankBy> rank_by) {
  MergedRun merged;
  const std::vector<Part> parts = read_parts(paths, merged.notes);
  std::vector<PartFigures> figures;
  std::vector<ModelReport> models;
  for (size_t i = 0; i < parts.size(); ++i) {
    figures.push_back(figures_of(parts[i], i));
    merged.parts.push_back(part_line(parts[i], figures.back().line));
    merged.part_shards.push_back(parts[i].run.shard);
    models.insert(models.end(), parts[i].run.models.begin(), parts[i].run.models.end());
  }
  std::sort(models.begin(), models.end(),
            [](const ModelReport& a, const ModelReport& b) { return a.index < b.index; });
  RunReport& run = merged.run = combine_parts(PartsRan::apart, figures, std::move(models));
  // The backend and mode the parts share: the first part's with a model (read_parts checks them).
  const auto typed =
      std::find_if(parts.begin(), parts.end(), [](const Part& p) { return !p.run.models.empty(); });
  const RunReport& typical = (typed == parts.end() ? parts.front() : *typed).run;
  run.backend = typical.backend;
  if (!typical.mode.empty()) run.mode = typical.mode;
  run.sweep = parts.front().run.sweep;
  run.gpu_note = "merged from " + std::to_string(parts.size()) +
                 " parts: each part's GPU samples are in its document";
  rank_run(run, rank_by);
  for (size_t index = 0, next = 0; index < run.sweep->models; ++index) {
    if (next < run.models.size() && run.models[next].index == index)
      ++next;
    else
      merged.missing.push_back(index);
  }
  return merged;
}

std::string missing_models_line(const MergedRun& merged, size_t named) {
  if (merged.missing.empty()) return "";
  const size_t total = merged.run.sweep ? merged.run.sweep->models : 0;
  std::string line = std::to_string(merged.missing.size()) + " of the sweep's " +
                     std::to_string(total) + " models " +
                     (merged.missing.size() == 1 ? "is" : "are") + " in no part: ";
  for (size_t i = 0; i < merged.missing.size() && i < named; ++i)
    line += (i ? ", #" : "#") + std::to_string(merged.missing[i]);
  if (merged.missing.size() > named)
    line += " and " + std::to_string(merged.missing.size() - named) + " more";
  // When every part is a shard of one count N, the shards of N that no part is.
  const auto& shards = merged.part_shards;
  const bool one_count =
      !shards.empty() && std::all_of(shards.begin(), shards.end(), [&](const auto& s) {
        return s && s->count == shards.front()->count;
      });
  if (one_count) {
    const size_t count = shards.front()->count;
    std::vector<bool> given(count, false);
    for (const auto& s : shards) given[s->index] = true;
    std::vector<std::string> absent;  // the first `named` of them
    size_t absent_count = 0;
    for (size_t i = 0; i < count && i < total;
         ++i)  // a shard past the sweep's models has none to miss
      if (!given[i]) {
        ++absent_count;
        if (absent_count <= named)
          absent.push_back(std::to_string(i) + "/" + std::to_string(count));
      }
    std::string shards_absent = joined(absent);
    if (absent_count > named)
      shards_absent += " and " + std::to_string(absent_count - named) + " more";
    if (absent_count > 0)
      line += " (" + std::string(absent_count == 1 ? "shard " : "shards ") + shards_absent +
              (absent_count == 1 ? " is" : " are") + " not among the parts)";
  }
  return line;
}

}  // namespace mf
