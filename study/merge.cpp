#include "study/merge.h"

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
#include "runtime/json_forms.h"
#include "study/journal.h"

namespace mf {
namespace {

using nlohmann::json;

// A part is read whole: a document of a sweep's most models (2^20, a few KiB each) is some GiB, and
// a bound keeps a device or a pipe from being read forever (runtime/input_file.h).
constexpr uintmax_t kMaxPartBytes = uintmax_t(16) << 30;

// One part as read, checked on its own.
struct Part {
  std::string path;
  bool journal = false;
  SweepIdentity sweep;
  std::optional<Shard> shard;
  std::string backend, mode;  // "" when unknown: a run whose models never reached a backend, a journal
                              // of --mode auto killed before it chose
  std::vector<ModelReport> models;
  // A document's figures (a journal has none of its run's: absent, or 0 where the field cannot be).
  std::optional<double> wall_s, startup_s, samples_per_s;
  std::string device_name, data;
  size_t data_bytes = 0, host_peak_rss_bytes = 0;
  std::optional<size_t> workers_peak_rss_bytes;
  int concurrency = 0, resumed_models = 0;
};

// nlohmann's message without its tag: "key 'models' not found", not "[json.exception.out_of_range.403] key...".
std::string model_words(const ModelReport& m) { return "model #" + std::to_string(m.index) + " '" + m.name + "'"; }

// A document's or a journal's report, read as the one form has it (the document leaves out the step
// timeline: an empty one stands in).
ModelReport model_from(json report) {
  report["timeline"] = {{"steps", json::array()}, {"epochs", json::array()}};
  return report.get<ModelReport>();
}

std::string text_of(const json& j, const char* key) {
  const json& v = j.at(key);
  return v.is_null() ? "" : v.get<std::string>();
}
std::optional<double> number_of(const json& j, const char* key) {
  const json& v = j.at(key);
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

void read_document(Part& part, const json& doc) {
  const std::string& path = part.path;
  if (!doc.is_object())
    throw UserError(path + ": not a multifit result document (JSON, but " + std::string(doc.type_name()) +
                    ", not an object): give run's --json documents or their journals");
  if (doc.contains("runs")) {
    std::string modes;
    if (doc["runs"].is_array())
      for (const json& run : doc["runs"])
        modes += (modes.empty() ? "" : ", ") + (run.is_object() ? run.value("mode", std::string("?")) : "?");
    throw UserError(path + ": a document of " + std::to_string(doc["runs"].size()) + " runs (" + modes +
                    "; --mode all or --repeat): merge takes documents of one run; run every shard once, with one of "
                    "--mode serial, streams, processes or packed (or auto)");
  }
  if (!doc.contains("models") || !doc["models"].is_array() || !doc.contains("mode"))
    throw UserError(path + ": not a multifit result document (no models and mode): give run's --json documents or "
                           "their journals");
  if (!doc.contains("sweep"))
    throw UserError(path + ": a document that does not name its sweep (field sweep): written by a multifit from "
                           "before --shard; merge takes documents of this version");
  if (doc["sweep"].is_null()) {
    const std::string error = doc.value("error", json()).is_string() ? doc["error"].get<std::string>() : "";
    throw UserError(path + (error.empty() ? ": a document of no sweep (multifit train's): merge takes run's documents"
                                          : ": a run that failed before it had its sweep (its error: " + error + ")"));
  }
  std::string field = "sweep";
  try {
    part.sweep = doc.at("sweep").get<SweepIdentity>();
    field = "shard";
    part.shard = doc.at("shard").get<std::optional<Shard>>();
    field = "the run's figures";
    part.backend = text_of(doc, "backend");
    part.mode = doc.at("mode").get<std::string>();
    part.device_name = text_of(doc, "device_name");
    part.data = text_of(doc.at("data"), "source");
    part.data_bytes = doc.at("data").at("bytes");
    part.host_peak_rss_bytes = doc.at("host_peak_rss_bytes");
    doc.at("workers_peak_rss_bytes").get_to(part.workers_peak_rss_bytes);
    part.wall_s = doc.at("wall_s").get<double>();
    part.startup_s = number_of(doc, "startup_s");
    part.samples_per_s = number_of(doc, "samples_per_s");
    part.concurrency = doc.at("concurrency");
    part.resumed_models = doc.at("resumed_models");
  } catch (const std::exception& e) {
    throw UserError(path + ": " + field + " cannot be read: " + without_tag(e.what()));
  }
  const json& models = doc["models"];
  for (size_t i = 0; i < models.size(); ++i) {
    try {
      part.models.push_back(model_from(models[i]));
    } catch (const std::exception& e) {
      throw UserError(path + ": models[" + std::to_string(i) + "] cannot be read: " + without_tag(e.what()));
    }
  }
}

void read_journal_part(Part& part, const std::string& text, std::vector<std::string>& notes) {
  const std::string& path = part.path;
  const JournalLines journal = parse_journal(path, text);
  const json& head = journal.header;
  if (!head.contains("sweep") || !head.contains("fingerprint"))
    throw UserError(path + ":1: a journal that does not name its sweep (written by a multifit from before "
                           "--shard): finish its run with --resume, which writes a document, and merge that");
  try {
    part.sweep = {head.at("sweep"), head.at("models"), head.at("fingerprint")};
    part.shard = head.at("shard").get<std::optional<Shard>>();
    part.backend = head.at("backend");
    part.mode = head.at("mode");
  } catch (const std::exception& e) {
    throw UserError(path + ":1: the journal's header cannot be read: " + without_tag(e.what()));
  }
  if (part.mode == "all")
    throw UserError(path + ":1: the journal of a --mode all run: merge takes parts of one mode; run every shard "
                           "with one of --mode serial, streams, processes or packed (or auto)");
  if (part.mode == "auto")  // the mode it chose; none yet when it was killed in its calibration, which journals nothing
    part.mode = journal.auto_choice.is_object() ? journal.auto_choice.value("mode", "") : "";
  std::map<size_t, const JournalModelLine*> last;  // a later line of a model supersedes an earlier one
  size_t other_modes = 0;
  for (const JournalModelLine& line : journal.models) {
    if (line.mode != part.mode) {
      ++other_modes;  // --solo's runs alone, the baseline of its slowdowns
      continue;
    }
    last[line.index] = &line;
  }
  for (const auto& [index, line] : last) {
    ModelReport m = line->ended.report;
    if (m.index != index || m.name != line->name)
      throw UserError(path + ":" + std::to_string(line->line) + ": model #" + std::to_string(index) + " '" +
                      line->name + "' has the report of #" + std::to_string(m.index) + " '" + m.name + "'");
    part.models.push_back(std::move(m));
  }
  if (other_modes > 0)
    notes.push_back(path + ": " + std::to_string(other_modes) + " model lines of another mode than its run's " +
                    part.mode + " (--solo's runs alone) left out");
  if (journal.cut_line > 0)
    notes.push_back(path + ":" + std::to_string(journal.cut_line) +
                    ": cut short, as a runner killed while writing it leaves it: its model is not in the merge");
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
  // A journal's first line is its header, one JSON object; a document's (as run writes it) is "{" alone.
  const std::string first = text.substr(0, text.find('\n'));
  const json head = json::parse(first, nullptr, false);
  if (head.is_object() && head.contains("journal")) {
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
    read_document(part, doc);
  }
  // Each model where the part says it is: in the sweep, in its shard, once.
  std::set<size_t> seen;
  for (const ModelReport& m : part.models) {
    if (m.index >= part.sweep.models)
      throw UserError(path + ": " + model_words(m) + " is past the sweep's " + std::to_string(part.sweep.models) +
                      " models: a broken part");
    if (part.shard && m.index % part.shard->count != part.shard->index)
      throw UserError(path + ": " + model_words(m) + " is not of " + shard_words(part.shard) + " (its places are " +
                      std::to_string(part.shard->index) + ", " + std::to_string(part.shard->index + part.shard->count) +
                      ", ...): a broken part");
    if (!seen.insert(m.index).second) throw UserError(path + ": " + model_words(m) + " is in it twice: a broken part");
  }
  return part;
}

std::string identity_words(const SweepIdentity& s) {
  return "'" + s.name + "' of " + std::to_string(s.models) + " models";
}

// Refuses `part` where it does not belong with the parts before it (`first`: the first of them; `typed`:
// the first that has a model, whose backend and mode the others must share; none yet: nullptr).
void check_belongs(const Part& part, const Part& first, const Part* typed, const std::vector<Part>& before) {
  const std::string& path = part.path;
  if (part.sweep.name != first.sweep.name || part.sweep.models != first.sweep.models)
    throw UserError(path + ": a part of the sweep " + identity_words(part.sweep) + ", but " + first.path +
                    " is of " + identity_words(first.sweep) + ": parts of another sweep");
  if (part.sweep.fingerprint != first.sweep.fingerprint)
    throw UserError(path + ": a part of the sweep " + identity_words(part.sweep) + " as " + first.path +
                    " is, but its models' specs differ (fingerprint " + part.sweep.fingerprint + ", " + first.path +
                    "'s " + first.sweep.fingerprint +
                    "): another sweep file of that name, or other overrides (--epochs, --learning-rate, --seed, "
                    "--batch-size, --memory-limit, --memory); run every part with the same ones");
  if (typed && !part.models.empty()) {
    if (!part.backend.empty() && !typed->backend.empty() && part.backend != typed->backend)
      throw UserError(path + ": trained on the " + part.backend + " backend, but " + typed->path + " on the " +
                      typed->backend + " backend: merge takes parts of one backend");
    if (!part.mode.empty() && !typed->mode.empty() && part.mode != typed->mode)
      throw UserError(path + ": a run in " + part.mode + " mode, but " + typed->path + " in " + typed->mode +
                      " mode: merge takes parts of one mode (run every shard with the same --mode; with auto each "
                      "shard chooses its own)");
  }
  // The journals of one run's MPI ranks (PATH, PATH.rank-R) are one part, each with its own models.
  const auto of_one_run = [](const Part& a, const Part& b) {
    const auto base = [](const Part& p) { return p.path.substr(0, std::min(p.path.size(), p.path.rfind(".rank-"))); };
    return a.journal && b.journal && base(a) == base(b);
  };
  if (part.shard)
    for (const Part& other : before)
      if (other.shard && other.shard->index == part.shard->index && other.shard->count == part.shard->count &&
          !of_one_run(part, other))
        throw UserError(path + ": " + shard_words(part.shard) + ", as " + other.path +
                        " is: each part once (a shard's journal and its document are one part: give one of them)");
}

// "host-a", or "host-a, host-b" for a part whose models ran on several machines.
std::string hosts_of(const Part& part) {
  std::vector<std::string> hosts;
  for (const ModelReport& m : part.models)
    if (!m.host.empty() && std::find(hosts.begin(), hosts.end(), m.host) == hosts.end()) hosts.push_back(m.host);
  std::string all;
  for (const std::string& h : hosts) all += (all.empty() ? "" : ", ") + h;
  return all;
}

std::string part_line(const Part& part, const RunPart& figures) {
  std::string line = part.path + " (" + (part.journal ? "journal, " : "") + shard_words(part.shard) +
                     (figures.host.empty() ? "" : " on " + figures.host) + "): " + std::to_string(part.models.size()) +
                     " model" + (part.models.size() == 1 ? "" : "s");
  if (figures.wall_s) line += ", wall " + format_duration(*figures.wall_s);
  if (figures.samples_per_s) line += ", " + std::to_string(int64_t(std::llround(*figures.samples_per_s))) + " samples/s";
  return line;
}

// Adds `text` to a "; "-joined list of distinct texts.
void add_distinct(std::string& list, const std::string& text) {
  if (text.empty() || list == text || list.find(text + "; ") == 0 || list.find("; " + text) != std::string::npos) return;
  list += (list.empty() ? "" : "; ") + text;
}

}  // namespace

MergedRun merge_parts(const std::vector<std::string>& paths, std::optional<RankBy> rank_by) {
  MergedRun merged;
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
    Part part = read_part(path, merged.notes);
    if (!parts.empty()) check_belongs(part, parts.front(), typed ? &parts[*typed] : nullptr, parts);
    for (const ModelReport& m : part.models) {
      const auto [at, fresh] = owner.emplace(m.index, parts.size());
      if (fresh) continue;
      const Part& other = parts[at->second];
      const ModelReport& theirs =
          *std::find_if(other.models.begin(), other.models.end(), [&](const ModelReport& o) { return o.index == m.index; });
      if (theirs.name != m.name)
        throw UserError(path + ": model #" + std::to_string(m.index) + " is '" + m.name + "', but in " + other.path +
                        " it is '" + theirs.name + "': parts of another sweep");
      throw UserError(path + ": " + model_words(m) + " is in " + other.path +
                      " too: parts must not overlap (each model in one part)");
    }
    if (!typed && !part.models.empty()) typed = parts.size();
    parts.push_back(std::move(part));
  }

  RunReport& run = merged.run;
  const Part& first = parts.front();
  run.sweep = first.sweep;
  const Part& typical = typed ? parts[*typed] : first;
  run.backend = typical.backend;
  if (!typical.mode.empty()) run.mode = typical.mode;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& part = parts[i];
    RunPart figures;
    figures.index = part.shard ? int(part.shard->index) : int(i);
    figures.host = hosts_of(part);
    figures.wall_s = part.wall_s;
    figures.startup_s = part.startup_s;
    figures.samples_per_s = part.samples_per_s;
    figures.models = int(part.models.size());
    merged.parts.push_back(part_line(part, figures));
    run.shards.push_back(figures);
    merged.part_shards.push_back(part.shard);
    // The run's figures of several processes: what adds up adds up, the rest is the largest part's.
    add_distinct(run.device_name, part.device_name);
    add_distinct(run.data, part.data);
    run.data_bytes += part.data_bytes;
    run.host_peak_rss_bytes = std::max(run.host_peak_rss_bytes, part.host_peak_rss_bytes);
    if (part.workers_peak_rss_bytes)
      run.workers_peak_rss_bytes = run.workers_peak_rss_bytes.value_or(0) + *part.workers_peak_rss_bytes;
    if (part.wall_s) run.wall_s = std::max(run.wall_s, *part.wall_s);
    run.concurrency = std::max(run.concurrency, part.concurrency);
    run.resumed_models += part.resumed_models;
    for (const ModelReport& m : part.models) {
      add_distinct(run.device_schedule, m.device_schedule);
      run.models.push_back(m);
    }
  }
  run.concurrency_reason = "merged from " + std::to_string(parts.size()) +
                           " parts: the most that one part trained at once (each part's reason is in its document)";
  run.gpu_note = "merged from " + std::to_string(parts.size()) + " parts: each part's GPU samples are in its document";
  std::sort(run.models.begin(), run.models.end(),
            [](const ModelReport& a, const ModelReport& b) { return a.index < b.index; });
  rank_run(run, rank_by);
  for (size_t index = 0, next = 0; index < run.sweep->models; ++index) {
    if (next < run.models.size() && run.models[next].index == index) ++next;
    else merged.missing.push_back(index);
  }
  return merged;
}

std::string missing_models_line(const MergedRun& merged, size_t named) {
  if (merged.missing.empty()) return "";
  const size_t total = merged.run.sweep ? merged.run.sweep->models : 0;
  std::string line = std::to_string(merged.missing.size()) + " of the sweep's " + std::to_string(total) + " models " +
                     (merged.missing.size() == 1 ? "is" : "are") + " in no part: ";
  for (size_t i = 0; i < merged.missing.size() && i < named; ++i)
    line += (i ? ", #" : "#") + std::to_string(merged.missing[i]);
  if (merged.missing.size() > named) line += " and " + std::to_string(merged.missing.size() - named) + " more";
  // When every part is a shard of one count N, the shards of N that no part is.
  const auto& shards = merged.part_shards;
  const bool one_count = !shards.empty() && std::all_of(shards.begin(), shards.end(), [&](const auto& s) {
    return s && s->count == shards.front()->count;
  });
  if (one_count) {
    const size_t count = shards.front()->count;
    std::vector<bool> given(count, false);
    for (const auto& s : shards) given[s->index] = true;
    std::string absent;
    size_t absent_count = 0;
    for (size_t i = 0; i < count && i < total; ++i)  // a shard past the sweep's models has none to miss
      if (!given[i]) {
        ++absent_count;
        if (absent_count <= named) absent += (absent.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
      }
    if (absent_count > named) absent += " and " + std::to_string(absent_count - named) + " more";
    if (absent_count > 0)
      line += " (" + std::string(absent_count == 1 ? "shard " : "shards ") + absent + (absent_count == 1 ? " is" : " are") +
              " not among the parts)";
  }
  return line;
}

}  // namespace mf
