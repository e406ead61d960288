// ldb_check_input.h: the input side of ldb_check (tests/cpp/ldb_check.cc), its
// only includer: access to Table::InternalGet, internal keys with LevelDB's internal
// comparator and filter policy, and reading the expected-contents file.

#ifndef LDB_CHECK_INPUT_H_
#define LDB_CHECK_INPUT_H_

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

namespace {

// ---------------------------------------------------------------------------
// Access to the private (but exported) leveldb::Table::InternalGet, which is
// the only path through the public library that consults the filter block.
// Explicit template instantiation is exempt from access checking, so this is
// well-formed C++ (no "#define private public").
using HandleResultFn = void (*)(void*, const leveldb::Slice&,
                                const leveldb::Slice&);
using InternalGetFn = leveldb::Status (leveldb::Table::*)(
    const leveldb::ReadOptions&, const leveldb::Slice&, void*, HandleResultFn);

struct InternalGetTag {
  friend InternalGetFn GetInternalGet(InternalGetTag);
};
template <InternalGetFn M>
struct InternalGetRobber {
  friend InternalGetFn GetInternalGet(InternalGetTag) { return M; }
};
template struct InternalGetRobber<&leveldb::Table::InternalGet>;
InternalGetFn GetInternalGet(InternalGetTag);

// ---------------------------------------------------------------------------
// Internal keys: user key followed by an 8-byte little-endian tag
// (sequence << 8 | type).

uint64_t DecodeFixed64LE(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::string EncodeFixed64LE(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

leveldb::Slice UserKey(const leveldb::Slice& ikey) {
  if (ikey.size() < 8) return ikey;  // malformed; compare it as a user key
  return leveldb::Slice(ikey.data(), ikey.size() - 8);
}

uint64_t Tag(const leveldb::Slice& ikey) {
  if (ikey.size() < 8) return 0;
  return DecodeFixed64LE(ikey.data() + ikey.size() - 8);
}

// Same ordering as LevelDB's (non-exported) InternalKeyComparator over a
// bytewise user comparator: user key ascending, then tag descending.
class InternalKeyComparator : public leveldb::Comparator {
 public:
  int Compare(const leveldb::Slice& a, const leveldb::Slice& b) const override {
    int r = UserKey(a).compare(UserKey(b));
    if (r != 0) return r;
    uint64_t ta = Tag(a), tb = Tag(b);
    if (ta > tb) return -1;
    if (ta < tb) return 1;
    return 0;
  }
  const char* Name() const override { return "leveldb.InternalKeyComparator"; }
  // Only used when building tables; a reader never calls them.
  void FindShortestSeparator(std::string*, const leveldb::Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

// Same as LevelDB's InternalFilterPolicy: the wrapped policy sees user keys.
class InternalFilterPolicy : public leveldb::FilterPolicy {
 public:
  explicit InternalFilterPolicy(const leveldb::FilterPolicy* user)
      : user_(user) {}
  const char* Name() const override { return user_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n,
                    std::string* dst) const override {
    std::vector<leveldb::Slice> user_keys;
    user_keys.reserve(n);
    for (int i = 0; i < n; ++i) user_keys.push_back(UserKey(keys[i]));
    user_->CreateFilter(user_keys.data(), n, dst);
  }
  bool KeyMayMatch(const leveldb::Slice& key,
                   const leveldb::Slice& filter) const override {
    return user_->KeyMayMatch(UserKey(key), filter);
  }

 private:
  const leveldb::FilterPolicy* user_;
};

// ---------------------------------------------------------------------------
// Expected-contents file.

struct Entry {
  std::string key;
  std::string value;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool HexDecode(const std::string& hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->clear();
  out->reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = HexDigit(hex[i]), lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>((hi << 4) | lo));
  }
  return true;
}

std::string HexEncode(const leveldb::Slice& s, size_t max_bytes = 48) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  size_t n = s.size() < max_bytes ? s.size() : max_bytes;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  if (n < s.size()) out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

// Minimal parser for one line: a flat JSON object whose members of interest
// are the string fields "key" and "value".  Other members are skipped if
// they are strings without escapes or bare scalars (numbers, true, ...).
class LineParser {
 public:
  explicit LineParser(const std::string& s) : s_(s) {}

  bool Parse(Entry* e, std::string* err) {
    bool have_key = false, have_value = false;
    SkipWs();
    if (!Eat('{')) return Fail(err, "expected '{'");
    SkipWs();
    if (Eat('}')) return Fail(err, "empty object");
    for (;;) {
      std::string name;
      SkipWs();
      if (!ReadString(&name)) return Fail(err, "expected a member name");
      SkipWs();
      if (!Eat(':')) return Fail(err, "expected ':'");
      SkipWs();
      if (name == "key" || name == "value") {
        std::string hex;
        if (!ReadString(&hex)) return Fail(err, "\"" + name + "\" is not a string");
        std::string* dst = (name == "key") ? &e->key : &e->value;
        if (!HexDecode(hex, dst)) return Fail(err, "\"" + name + "\" is not valid hex");
        (name == "key" ? have_key : have_value) = true;
      } else if (pos_ < s_.size() && s_[pos_] == '"') {
        std::string ignored;
        if (!ReadString(&ignored)) return Fail(err, "bad string in \"" + name + "\"");
      } else {
        size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != '}') ++pos_;
        if (pos_ == start) return Fail(err, "missing value for \"" + name + "\"");
      }
      SkipWs();
      if (Eat(',')) continue;
      if (Eat('}')) break;
      return Fail(err, "expected ',' or '}'");
    }
    SkipWs();
    if (pos_ != s_.size()) return Fail(err, "trailing characters");
    if (!have_key) return Fail(err, "missing \"key\"");
    if (!have_value) return Fail(err, "missing \"value\"");
    return true;
  }

 private:
  void SkipWs() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\r' || s_[pos_] == '\n'))
      ++pos_;
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // A string without escape sequences (hex strings and field names).
  bool ReadString(std::string* out) {
    if (!Eat('"')) return false;
    size_t end = s_.find('"', pos_);
    if (end == std::string::npos) return false;
    out->assign(s_, pos_, end - pos_);
    if (out->find('\\') != std::string::npos) return false;
    pos_ = end + 1;
    return true;
  }
  bool Fail(std::string* err, const std::string& msg) {
    *err = msg + " at column " + std::to_string(pos_ + 1);
    return false;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

bool ReadExpected(const std::string& path, std::vector<Entry>* out,
                  std::string* err) {
  std::ifstream in(path, std::ios::in | std::ios::binary);
  if (!in) {
    *err = "cannot open " + path;
    return false;
  }
  std::string line;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    bool blank = true;
    for (char c : line)
      if (c != ' ' && c != '\t' && c != '\r') blank = false;
    if (blank) continue;
    Entry e;
    std::string msg;
    if (!LineParser(line).Parse(&e, &msg)) {
      *err = path + ":" + std::to_string(lineno) + ": " + msg;
      return false;
    }
    out->push_back(std::move(e));
  }
  if (in.bad()) {
    *err = "read error on " + path;
    return false;
  }
  return true;
}


}  // namespace

#endif  // LDB_CHECK_INPUT_H_
