// ldb_check: "LevelDB reads our tables" conformance check.
//
// Opens one table file with the real C++ LevelDB (Debian libleveldb-dev,
// LevelDB 1.23, public table API) and checks that it yields exactly the
// entries listed in an expected-contents file.
//
// Build:  g++ -O1 -std=c++17 tests/cpp/ldb_check.cc -lleveldb -o ldb_check
// Usage:  ldb_check --table T --expected E.jsonl [--bloom BITS] [--internal]
//
// E.jsonl: one JSON object per line, {"key":"<hex>","value":"<hex>"}, in the
// order the table must yield them.  See tests/cpp/README.md for the checks,
// the output line and the exit codes.
//
// Its input side (InternalGet access, internal keys, the expected-contents
// parser) is in ldb_check_input.h beside it, found by the #include; the build
// line stays the same.

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "leveldb/comparator.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"
#include "leveldb/table.h"

#include "ldb_check_input.h"

namespace {

// ---------------------------------------------------------------------------
// Output.

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

struct Result {
  std::string table;
  size_t entries = 0;
  size_t forward_mismatches = 0;
  size_t backward_mismatches = 0;
  size_t seek_failures = 0;
  size_t get_failures = 0;
  long filter_probes = -1;  // -1: filter check not run (no --bloom)
  long filter_passed = -1;  // absent probes the filter let through
  long filter_baseline = -1;  // same probes answered without a filter
  bool filter_ok = true;
  std::string status = "ok";
  bool ok = false;
};

void PrintResult(const Result& r) {
  std::string line = "{\"table\": " + JsonString(r.table) +
                     ", \"entries\": " + std::to_string(r.entries) +
                     ", \"forward_mismatches\": " + std::to_string(r.forward_mismatches) +
                     ", \"backward_mismatches\": " + std::to_string(r.backward_mismatches) +
                     ", \"seek_failures\": " + std::to_string(r.seek_failures) +
                     ", \"get_failures\": " + std::to_string(r.get_failures);
  if (r.filter_probes >= 0) {
    line += ", \"filter_probes\": " + std::to_string(r.filter_probes) +
            ", \"filter_passed\": " + std::to_string(r.filter_passed) +
            ", \"filter_baseline\": " + std::to_string(r.filter_baseline) +
            ", \"filter_ok\": " + std::string(r.filter_ok ? "true" : "false");
  }
  line += ", \"status\": " + JsonString(r.status) +
          ", \"ok\": " + std::string(r.ok ? "true" : "false") + "}";
  std::cout << line << std::endl;
}

void NoteStatus(Result* r, const leveldb::Status& s, const char* where) {
  if (!s.ok() && r->status == "ok") {
    r->status = s.ToString();
    std::cerr << "ldb_check: " << where << ": " << r->status << "\n";
  }
}

const int kMaxReported = 5;

void ReportMismatch(size_t* count, const char* pass, size_t pos,
                    const Entry* want, leveldb::Iterator* it) {
  if ((*count)++ >= kMaxReported) return;
  std::cerr << "ldb_check: " << pass << " mismatch at position " << pos << ": ";
  if (want == nullptr) {
    std::cerr << "unexpected extra entry key=" << HexEncode(it->key());
  } else if (it == nullptr || !it->Valid()) {
    std::cerr << "missing entry key=" << HexEncode(want->key);
  } else if (it->key() != leveldb::Slice(want->key)) {
    std::cerr << "key " << HexEncode(it->key()) << " != expected "
              << HexEncode(want->key);
  } else {
    std::cerr << "value for key " << HexEncode(want->key) << " is "
              << HexEncode(it->value()) << ", expected "
              << HexEncode(want->value);
  }
  std::cerr << "\n";
}

bool Matches(leveldb::Iterator* it, const Entry& e) {
  return it->Valid() && it->key() == leveldb::Slice(e.key) &&
         it->value() == leveldb::Slice(e.value);
}

struct GetCapture {
  bool called = false;
  std::string key;
  std::string value;
};

void CaptureResult(void* arg, const leveldb::Slice& k, const leveldb::Slice& v) {
  GetCapture* c = static_cast<GetCapture*>(arg);
  c->called = true;
  c->key.assign(k.data(), k.size());
  c->value.assign(v.data(), v.size());
}

leveldb::Status TableGet(leveldb::Table* t, const leveldb::ReadOptions& ro,
                         const std::string& key, GetCapture* out) {
  static const InternalGetFn fn = GetInternalGet(InternalGetTag());
  return (t->*fn)(ro, key, out, &CaptureResult);
}

// Keys that are certainly absent from the table, strictly inside its key
// range, for measuring whether the filter is in use.
std::vector<std::string> AbsentProbes(const std::vector<Entry>& expected,
                                      bool internal) {
  std::set<std::string> present;
  for (const Entry& e : expected)
    present.insert(internal ? UserKey(e.key).ToString() : e.key);
  std::vector<std::string> probes;
  if (present.size() < 2) return probes;
  const std::string last_user = *present.rbegin();
  // kMaxSequenceNumber << 8 | kTypeValue, the tag of a DB lookup key.
  const std::string seek_tag = EncodeFixed64LE((((uint64_t{1} << 56) - 1) << 8) | 1);
  for (const std::string& u : present) {
    if (u == last_user) continue;
    std::string p = u + '\0';  // immediate successor of u
    if (present.count(p)) continue;
    probes.push_back(internal ? p + seek_tag : p);
  }
  return probes;
}

long CountPassed(leveldb::Table* t, const leveldb::ReadOptions& ro,
                 const std::vector<std::string>& probes, Result* r) {
  long passed = 0;
  for (const std::string& p : probes) {
    GetCapture c;
    NoteStatus(r, TableGet(t, ro, p, &c), "filter probe");
    if (c.called) ++passed;
  }
  return passed;
}

void Usage() {
  std::cerr << "usage: ldb_check --table T --expected E.jsonl [--bloom BITS] "
               "[--internal]\n";
}

class Opened {
 public:
  ~Opened() {
    delete table;
    delete file;
  }
  leveldb::RandomAccessFile* file = nullptr;
  leveldb::Table* table = nullptr;
};

leveldb::Status OpenTable(const std::string& path, const leveldb::Options& options,
                          Opened* out) {
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::Status s = env->GetFileSize(path, &size);
  if (!s.ok()) return s;
  s = env->NewRandomAccessFile(path, &out->file);
  if (!s.ok()) return s;
  return leveldb::Table::Open(options, out->file, size, &out->table);
}

}  // namespace

int main(int argc, char** argv) {
  std::string table_path, expected_path;
  int bloom_bits = -1;
  bool internal = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--internal") {
      internal = true;
    } else if ((a == "--table" || a == "--expected" || a == "--bloom") &&
               i + 1 < argc) {
      std::string v = argv[++i];
      if (a == "--table") {
        table_path = v;
      } else if (a == "--expected") {
        expected_path = v;
      } else {
        char* end = nullptr;
        long b = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || b < 0 || b > 1000) {
          std::cerr << "ldb_check: bad --bloom value: " << v << "\n";
          Usage();
          return 2;
        }
        bloom_bits = static_cast<int>(b);
      }
    } else {
      std::cerr << "ldb_check: unexpected argument: " << a << "\n";
      Usage();
      return 2;
    }
  }
  if (table_path.empty() || expected_path.empty()) {
    Usage();
    return 2;
  }

  Result r;
  r.table = table_path;

  std::vector<Entry> expected;
  std::string err;
  if (!ReadExpected(expected_path, &expected, &err)) {
    std::cerr << "ldb_check: " << err << "\n";
    r.status = "expected file: " + err;
    PrintResult(r);
    return 2;
  }
  r.entries = expected.size();
  if (internal) {
    for (size_t i = 0; i < expected.size(); ++i) {
      if (expected[i].key.size() < 8) {
        std::cerr << "ldb_check: expected entry " << i
                  << " is shorter than an internal key (8-byte tag)\n";
        r.status = "expected file: key shorter than 8 bytes with --internal";
        PrintResult(r);
        return 2;
      }
    }
  }

  InternalKeyComparator icmp;
  std::unique_ptr<const leveldb::FilterPolicy> bloom;
  std::unique_ptr<InternalFilterPolicy> ibloom;
  leveldb::Options options;
  options.paranoid_checks = true;
  options.block_cache = nullptr;
  if (internal) options.comparator = &icmp;
  if (bloom_bits >= 0) {
    bloom.reset(leveldb::NewBloomFilterPolicy(bloom_bits));
    if (internal) {
      ibloom.reset(new InternalFilterPolicy(bloom.get()));
      options.filter_policy = ibloom.get();
    } else {
      options.filter_policy = bloom.get();
    }
  }

  Opened t;
  leveldb::Status s = OpenTable(table_path, options, &t);
  if (!s.ok()) {
    r.status = s.ToString();
    std::cerr << "ldb_check: cannot open table " << table_path << ": "
              << r.status << "\n";
    PrintResult(r);
    return 2;
  }

  leveldb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;

  // (1) forward iteration.
  {
    std::unique_ptr<leveldb::Iterator> it(t.table->NewIterator(ro));
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      const Entry* want = i < expected.size() ? &expected[i] : nullptr;
      if (want == nullptr || !Matches(it.get(), *want))
        ReportMismatch(&r.forward_mismatches, "forward", i, want, it.get());
    }
    for (; i < expected.size(); ++i)
      ReportMismatch(&r.forward_mismatches, "forward", i, &expected[i], it.get());
    NoteStatus(&r, it->status(), "forward iteration");
  }

  // (2) backward iteration.
  {
    std::unique_ptr<leveldb::Iterator> it(t.table->NewIterator(ro));
    size_t n = 0;  // entries seen so far, from the end
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++n) {
      const Entry* want =
          n < expected.size() ? &expected[expected.size() - 1 - n] : nullptr;
      if (want == nullptr || !Matches(it.get(), *want))
        ReportMismatch(&r.backward_mismatches, "backward",
                       want ? expected.size() - 1 - n : n, want, it.get());
    }
    for (; n < expected.size(); ++n)
      ReportMismatch(&r.backward_mismatches, "backward", expected.size() - 1 - n,
                     &expected[expected.size() - 1 - n], it.get());
    NoteStatus(&r, it->status(), "backward iteration");
  }

  // (3) Seek to every expected key; (4) seek past the last key.
  {
    std::unique_ptr<leveldb::Iterator> it(t.table->NewIterator(ro));
    for (size_t i = 0; i < expected.size(); ++i) {
      it->Seek(expected[i].key);
      if (!Matches(it.get(), expected[i]))
        ReportMismatch(&r.seek_failures, "seek", i, &expected[i], it.get());
      NoteStatus(&r, it->status(), "seek");
    }
    if (!expected.empty()) {
      const std::string& last = expected.back().key;
      std::string past;
      if (internal) {
        past = UserKey(last).ToString() + '\xff' + last.substr(last.size() - 8);
      } else {
        past = last + '\xff';
      }
      it->Seek(past);
      if (it->Valid()) {
        if (r.seek_failures++ < kMaxReported)
          std::cerr << "ldb_check: seek past the last key is valid, at key "
                    << HexEncode(it->key()) << "\n";
      }
      NoteStatus(&r, it->status(), "seek past last");
    }
  }

  // Point lookups through Table::InternalGet, the path that consults the
  // filter block: every expected key must be found with its value.
  for (size_t i = 0; i < expected.size(); ++i) {
    GetCapture c;
    leveldb::Status gs = TableGet(t.table, ro, expected[i].key, &c);
    NoteStatus(&r, gs, "get");
    if (!gs.ok() || !c.called || c.key != expected[i].key ||
        c.value != expected[i].value) {
      if (r.get_failures++ < kMaxReported) {
        std::cerr << "ldb_check: get of key " << HexEncode(expected[i].key);
        if (!gs.ok())
          std::cerr << " failed: " << gs.ToString();
        else if (!c.called)
          std::cerr << " found nothing (filter said absent, or no block)";
        else if (c.key != expected[i].key)
          std::cerr << " landed on key " << HexEncode(c.key);
        else
          std::cerr << " returned a wrong value (" << c.value.size() << " bytes)";
        std::cerr << "\n";
      }
    }
  }

  // With --bloom: the table's filter must be found under the policy's name
  // and must reject absent keys.  Compare against the same table opened
  // without a filter policy (where every in-range probe reaches a block).
  if (bloom_bits >= 0) {
    std::vector<std::string> probes = AbsentProbes(expected, internal);
    leveldb::Options nf = options;
    nf.filter_policy = nullptr;
    Opened base;
    leveldb::Status bs = OpenTable(table_path, nf, &base);
    NoteStatus(&r, bs, "reopen without filter");
    r.filter_probes = static_cast<long>(probes.size());
    r.filter_passed = CountPassed(t.table, ro, probes, &r);
    r.filter_baseline = bs.ok() ? CountPassed(base.table, ro, probes, &r) : 0;
    // Judge only when the baseline is large enough to tell (a working filter
    // with >= 1 bit per key passes 16 absent keys with probability < 0.1%).
    if (r.filter_baseline >= 16 && r.filter_passed >= r.filter_baseline) {
      r.filter_ok = false;
      std::cerr << "ldb_check: filter not in use: " << r.filter_passed << " of "
                << r.filter_baseline
                << " absent in-range probes passed (is the filter block named "
                   "filter."
                << options.filter_policy->Name() << "?)\n";
    }
  }

  r.ok = r.status == "ok" && r.forward_mismatches == 0 &&
         r.backward_mismatches == 0 && r.seek_failures == 0 &&
         r.get_failures == 0 && r.filter_ok;
  PrintResult(r);
  return r.ok ? 0 : 1;
}
