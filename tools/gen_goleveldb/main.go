// Command gen_goleveldb writes the goleveldb test fixtures under testdata/goleveldb/.
//
// It uses github.com/syndtr/goleveldb (Debian package golang-github-syndtr-goleveldb-dev,
// version 0.0~git20200815.5c35d60) without Go modules:
//
//	cd tools/gen_goleveldb && GO111MODULE=off GOPATH=/usr/share/gocode go run main.go ../../testdata/goleveldb
//
// Everything is deterministic (fixed PRNG seed, no timestamps in table files), so running it again
// reproduces the same bytes.
//
// For every table X.ldb it writes:
//
//	X.entries.jsonl  every entry in file order: {"key","value"} (plain keys) or
//	                 {"ikey","seq","type","value"} (DB tables with internal keys)
//	X.gets.jsonl     probes {"key","found","value"?}: present keys, deleted keys, never-written keys
//	                 and near misses, answered by goleveldb itself (table.Reader.Get with the bloom
//	                 filter for plain tables, DB.Get for the DB table).
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/ioutil"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
	"github.com/syndtr/goleveldb/leveldb/table"
	"github.com/syndtr/goleveldb/leveldb/util"
)

type kv struct{ k, v []byte }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

var words = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}

// makeKeys returns n distinct keys, sorted bytewise, with varied lengths (1..~300 bytes).
func makeKeys(rng *rand.Rand, n int) [][]byte {
	seen := map[string]bool{}
	var keys [][]byte
	for len(keys) < n {
		i := len(keys)
		var k string
		switch {
		case i%211 == 0:
			// long key sharing a long prefix with its neighbours
			k = fmt.Sprintf("long/%s/%06d", strings.Repeat("p", 100+rng.Intn(200)), rng.Intn(1000000))
		case i%53 == 0:
			// short key, 1..3 bytes (binary)
			b := make([]byte, 1+rng.Intn(3))
			rng.Read(b)
			k = string(b)
		case i%7 == 0:
			k = fmt.Sprintf("user:%08d:%s", rng.Intn(100000000), words[rng.Intn(len(words))])
		default:
			suffix := make([]byte, rng.Intn(24))
			for j := range suffix {
				suffix[j] = byte('a' + rng.Intn(26))
			}
			k = fmt.Sprintf("key%06d%s", rng.Intn(1000000), suffix)
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, []byte(k))
	}
	sort.Slice(keys, func(a, b int) bool { return bytes.Compare(keys[a], keys[b]) < 0 })
	return keys
}

// makeValue returns a compressible value of varied length (sometimes empty, sometimes binary).
func makeValue(rng *rand.Rand, i int) []byte {
	switch {
	case i%97 == 0:
		return []byte{}
	case i%61 == 0:
		b := make([]byte, 16+rng.Intn(48)) // incompressible binary
		rng.Read(b)
		return b
	case i%401 == 0:
		return []byte(strings.Repeat(words[i%len(words)], 200+rng.Intn(200))) // 1..4 KiB
	}
	var sb strings.Builder
	n := rng.Intn(5)
	fmt.Fprintf(&sb, "v%d", i)
	for j := 0; j < n; j++ {
		sb.WriteString(" ")
		sb.WriteString(words[rng.Intn(len(words))])
	}
	return []byte(sb.String())
}

func writeJSONL(path string, rows []string) {
	var buf bytes.Buffer
	for _, r := range rows {
		buf.WriteString(r)
		buf.WriteByte('\n')
	}
	check(ioutil.WriteFile(path, buf.Bytes(), 0644))
}

func hx(b []byte) string { return hex.EncodeToString(b) }

func getRow(key, value []byte, found bool) string {
	if found {
		return fmt.Sprintf(`{"key": "%s", "found": true, "value": "%s"}`, hx(key), hx(value))
	}
	return fmt.Sprintf(`{"key": "%s", "found": false}`, hx(key))
}

// absentProbes returns keys that are not in present: never-written keys and near misses.
func absentProbes(rng *rand.Rand, kvs []kv, present map[string]bool) [][]byte {
	var c [][]byte
	c = append(c, []byte(""), []byte("\x00"), []byte("\xff\xff\xff\xff"), []byte("zzzz"), []byte("key"),
		[]byte("nonexistent"), []byte("key999999zzzz"), []byte("user:"))
	for i := 0; i < 60 && len(kvs) > 0; i++ {
		k := kvs[rng.Intn(len(kvs))].k
		switch i % 4 {
		case 0:
			c = append(c, append(append([]byte{}, k...), 0)) // key + "\x00"
		case 1:
			if len(k) > 1 {
				c = append(c, append([]byte{}, k[:len(k)-1]...)) // prefix
			}
		case 2:
			b := append([]byte{}, k...)
			b[len(b)-1]++ // last byte bumped
			c = append(c, b)
		case 3:
			c = append(c, []byte(fmt.Sprintf("absent%06d", rng.Intn(1000000))))
		}
	}
	var out [][]byte
	for _, k := range c {
		if !present[string(k)] {
			out = append(out, k)
			present[string(k)] = true // dedupe
		}
	}
	return out
}

// writePlainTable writes kvs (sorted, plain keys) to dir/name.ldb with o, reads it back with
// goleveldb's table.Reader to cross-check, and writes the .entries.jsonl and .gets.jsonl files.
func writePlainTable(dir, name string, kvs []kv, o *opt.Options, rng *rand.Rand) {
	path := filepath.Join(dir, name+".ldb")
	f, err := os.Create(path)
	check(err)
	w := table.NewWriter(f, o)
	for _, e := range kvs {
		check(w.Append(e.k, e.v))
	}
	check(w.Close())
	check(f.Close())

	var rows []string
	for _, e := range kvs {
		rows = append(rows, fmt.Sprintf(`{"key": "%s", "value": "%s"}`, hx(e.k), hx(e.v)))
	}
	writeJSONL(filepath.Join(dir, name+".entries.jsonl"), rows)

	// Read back.
	data, err := ioutil.ReadFile(path)
	check(err)
	ro := &opt.Options{Filter: o.Filter, Strict: opt.StrictAll}
	r, err := table.NewReader(bytes.NewReader(data), int64(len(data)), storage.FileDesc{Type: storage.TypeTable, Num: 1}, nil, nil, ro)
	check(err)
	it := r.NewIterator(nil, nil)
	i := 0
	for it.Next() {
		if i >= len(kvs) || !bytes.Equal(it.Key(), kvs[i].k) || !bytes.Equal(it.Value(), kvs[i].v) {
			check(fmt.Errorf("%s: read-back mismatch at entry %d", name, i))
		}
		i++
	}
	check(it.Error())
	it.Release()
	if i != len(kvs) {
		check(fmt.Errorf("%s: read back %d entries, wrote %d", name, i, len(kvs)))
	}

	// Probes: every 25th present key plus absent keys, answered by the Reader (filter on).
	present := map[string]bool{}
	for _, e := range kvs {
		present[string(e.k)] = true
	}
	var gets []string
	for i := 0; i < len(kvs); i += 25 {
		v, err := r.Get(kvs[i].k, nil)
		check(err)
		if !bytes.Equal(v, kvs[i].v) {
			check(fmt.Errorf("%s: Get mismatch for %q", name, kvs[i].k))
		}
		gets = append(gets, getRow(kvs[i].k, v, true))
	}
	for _, k := range absentProbes(rng, kvs, present) {
		_, err := r.Get(k, nil)
		if err != errors.ErrNotFound {
			check(fmt.Errorf("%s: Get(%q) = %v, want not found", name, k, err))
		}
		gets = append(gets, getRow(k, nil, false))
	}
	r.Release()
	writeJSONL(filepath.Join(dir, name+".gets.jsonl"), gets)
	fmt.Printf("%s: %d entries, %d bytes, %d data blocks\n", name, len(kvs), len(data), w.BlocksLen())
}

func genPlain(dir string) {
	rng := rand.New(rand.NewSource(1))
	keys := makeKeys(rng, 1500)
	kvs := make([]kv, len(keys))
	for i, k := range keys {
		kvs[i] = kv{k, makeValue(rng, i)}
	}
	bloom := filter.NewBloomFilter(10)

	// (a) bloom 10, snappy, defaults otherwise (block size 4096, restart interval 16, base lg 11).
	writePlainTable(dir, "plain_bloom_snappy", kvs,
		&opt.Options{Filter: bloom, Compression: opt.SnappyCompression}, rand.New(rand.NewSource(2)))
	// (b) bloom 10, no compression.
	writePlainTable(dir, "plain_bloom_nocompress", kvs[:1000],
		&opt.Options{Filter: bloom, Compression: opt.NoCompression}, rand.New(rand.NewSource(3)))
	// (d) empty tables.
	writePlainTable(dir, "empty_bloom_snappy", nil,
		&opt.Options{Filter: bloom, Compression: opt.SnappyCompression}, rand.New(rand.NewSource(4)))
	writePlainTable(dir, "empty_nofilter_nocompress", nil,
		&opt.Options{Compression: opt.NoCompression}, rand.New(rand.NewSource(5)))
	// (e) non-default filter base lg (13 = one filter per 8 KiB of data-block offsets), small blocks
	// (1 KiB) and restart interval 4, so several data blocks share one filter.
	writePlainTable(dir, "plain_bloom_baselg13", kvs[:600],
		&opt.Options{Filter: bloom, Compression: opt.NoCompression, FilterBaseLg: 13,
			BlockSize: 1024, BlockRestartInterval: 4}, rand.New(rand.NewSource(6)))
	// (e') base lg 8: 256-byte filter ranges, many empty filters between 4 KiB snappy blocks.
	writePlainTable(dir, "plain_bloom_baselg8", kvs[:500],
		&opt.Options{Filter: bloom, Compression: opt.SnappyCompression, FilterBaseLg: 8},
		rand.New(rand.NewSource(7)))
}

// genDB builds a goleveldb DB with puts, overwrites and deletes (a snapshot keeps old versions and
// deletion markers alive through compaction), compacts everything, and copies the table file(s).
func genDB(dir string) {
	tmp, err := ioutil.TempDir("", "gen_goleveldb_db")
	check(err)
	defer os.RemoveAll(tmp)
	bloom := filter.NewBloomFilter(10)
	o := &opt.Options{Filter: bloom, Compression: opt.SnappyCompression}
	db, err := leveldb.OpenFile(tmp, o)
	check(err)

	rng := rand.New(rand.NewSource(10))
	keys := makeKeys(rng, 1000)
	live := map[string][]byte{}
	deleted := map[string]bool{}
	for i, k := range keys { // seq 1..1000
		v := makeValue(rng, i)
		check(db.Put(k, v, nil))
		live[string(k)] = v
	}
	snap, err := db.GetSnapshot() // seq 1000: keeps the versions above alive
	check(err)
	for i := 0; i < 150; i++ { // overwrites
		k := keys[rng.Intn(len(keys))]
		v := []byte(fmt.Sprintf("overwritten-%d %s", i, words[i%len(words)]))
		check(db.Put(k, v, nil))
		live[string(k)] = v
		delete(deleted, string(k))
	}
	for i := 0; i < 80; i++ { // deletes of existing keys (some already overwritten)
		k := keys[rng.Intn(len(keys))]
		check(db.Delete(k, nil))
		delete(live, string(k))
		deleted[string(k)] = true
	}
	for i := 0; i < 20; i++ { // deletes of never-written keys
		k := []byte(fmt.Sprintf("never-written-%03d", i))
		check(db.Delete(k, nil))
		deleted[string(k)] = true
	}
	for i := 0; i < 30; i++ { // new keys written after the snapshot
		k := []byte(fmt.Sprintf("late/%04d", i))
		v := []byte(fmt.Sprintf("late value %d", i))
		check(db.Put(k, v, nil))
		live[string(k)] = v
	}
	for i := 0; i < 6; i++ { // put then delete then put again (3 versions after the snapshot)
		k := []byte(fmt.Sprintf("late/%04d", i*5))
		check(db.Delete(k, nil))
		v := []byte(fmt.Sprintf("late value %d again", i*5))
		check(db.Put(k, v, nil))
		live[string(k)] = v
	}
	check(db.CompactRange(util.Range{}))

	// Probes answered by the DB (newest state; every entry is in the table files now).
	var gets []string
	present := map[string]bool{}
	var liveKVs []kv
	for k, v := range live {
		present[k] = true
		liveKVs = append(liveKVs, kv{[]byte(k), v})
	}
	sort.Slice(liveKVs, func(a, b int) bool { return bytes.Compare(liveKVs[a].k, liveKVs[b].k) < 0 })
	for i := 0; i < len(liveKVs); i += 10 {
		v, err := db.Get(liveKVs[i].k, nil)
		check(err)
		gets = append(gets, getRow(liveKVs[i].k, v, true))
	}
	var delKeys []string
	for k := range deleted {
		delKeys = append(delKeys, k)
	}
	sort.Strings(delKeys)
	for _, k := range delKeys {
		present[k] = true
		_, err := db.Get([]byte(k), nil)
		if err != errors.ErrNotFound {
			check(fmt.Errorf("db: deleted key %q: %v", k, err))
		}
		gets = append(gets, getRow([]byte(k), nil, false))
	}
	for _, k := range absentProbes(rand.New(rand.NewSource(11)), liveKVs, present) {
		_, err := db.Get(k, nil)
		if err != errors.ErrNotFound {
			check(fmt.Errorf("db: Get(%q) = %v, want not found", k, err))
		}
		gets = append(gets, getRow(k, nil, false))
	}
	snap.Release()
	check(db.Close())

	// Copy the table files out and list their raw internal entries.
	files, err := filepath.Glob(filepath.Join(tmp, "*.ldb"))
	check(err)
	sort.Strings(files)
	if len(files) != 1 {
		check(fmt.Errorf("db: expected exactly one table after CompactRange, got %v", files))
	}
	name := "db_snapshot"
	data, err := ioutil.ReadFile(files[0])
	check(err)
	check(ioutil.WriteFile(filepath.Join(dir, name+".ldb"), data, 0644))
	// A bytewise comparer is fine for a full First..Next scan (no seeks).
	r, err := table.NewReader(bytes.NewReader(data), int64(len(data)), storage.FileDesc{Type: storage.TypeTable, Num: 1}, nil, nil,
		&opt.Options{Strict: opt.StrictAll})
	check(err)
	ti := r.NewIterator(nil, nil)
	var rows []string
	var seqMax uint64
	nDel := 0
	for ti.Next() {
		ik := ti.Key()
		if len(ik) < 8 {
			check(fmt.Errorf("db: short internal key %x", ik))
		}
		tag := binary.LittleEndian.Uint64(ik[len(ik)-8:])
		seq, typ := tag>>8, tag&0xff
		if seq > seqMax {
			seqMax = seq
		}
		if typ == 0 {
			nDel++
		}
		rows = append(rows, fmt.Sprintf(`{"ikey": "%s", "seq": %d, "type": %d, "value": "%s"}`, hx(ik), seq, typ, hx(ti.Value())))
	}
	check(ti.Error())
	ti.Release()
	r.Release()
	writeJSONL(filepath.Join(dir, name+".entries.jsonl"), rows)
	writeJSONL(filepath.Join(dir, name+".gets.jsonl"), gets)
	fmt.Printf("%s (from %s): %d internal entries (%d deletions, max seq %d), %d live keys, %d bytes\n",
		name, filepath.Base(files[0]), len(rows), nDel, seqMax, len(live), len(data))
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen_goleveldb OUTDIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	check(os.MkdirAll(dir, 0755))
	genPlain(dir)
	genDB(dir)
}
