// Command gen_goleveldb_dir writes testdata/db/goleveldb: a whole database directory written
// by goleveldb (tables at several levels, writes left in the journal, deletions, a snapshot
// held during compaction), and expected.json with what goleveldb itself read back: "scan"
// (its iterator), "gets" (present, deleted and never-written keys), "last_sequence", and
// "snapshot_seq" / "snapshot_scan" / "snapshot_gets" through the snapshot.
//
//	apt-get install golang golang-github-syndtr-goleveldb-dev
//	cd tools/gen_goleveldb_dir && GO111MODULE=off GOPATH=/usr/share/gocode go run main.go ../../testdata/db/goleveldb
//
// goleveldb's LOG file (timestamps) is removed afterwards.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func key(i int) []byte { return []byte(fmt.Sprintf("key/%05d", i)) }

func value(i, round int) []byte {
	v := []byte(fmt.Sprintf("v%d-%d:", round, i))
	for j := 0; j < (i*7+round)%13; j++ {
		v = append(v, "ab"...)
	}
	return v
}

func scan(it interface {
	Next() bool
	Key() []byte
	Value() []byte
	Release()
	Error() error
}) [][2]string {
	out := [][2]string{}
	for it.Next() {
		out = append(out, [2]string{hex.EncodeToString(it.Key()), hex.EncodeToString(it.Value())})
	}
	check(it.Error())
	it.Release()
	return out
}

func gets(get func([]byte) ([]byte, error), n int) []map[string]interface{} {
	var keys [][]byte
	for i := 0; i < n+40; i += 7 {
		keys = append(keys, key(i))
	}
	keys = append(keys, []byte(""), []byte("key/"), []byte("zzz"))
	out := []map[string]interface{}{}
	for _, k := range keys {
		v, err := get(k)
		row := map[string]interface{}{"key": hex.EncodeToString(k), "found": err == nil}
		if err == nil {
			row["value"] = hex.EncodeToString(v)
		} else if err != leveldb.ErrNotFound {
			panic(err)
		}
		out = append(out, row)
	}
	return out
}

func main() {
	dir := os.Args[1]
	check(os.RemoveAll(dir))
	o := &opt.Options{
		Filter:              filter.NewBloomFilter(10),
		Compression:         opt.SnappyCompression,
		WriteBuffer:         64 * 1024,
		BlockSize:           1024,
		CompactionTableSize: 16 * 1024,
	}
	db, err := leveldb.OpenFile(dir, o)
	check(err)
	n := 600
	seq := 0
	for i := 0; i < n; i++ {
		check(db.Put(key(i), value(i, 0), nil))
		seq++
	}
	check(db.CompactRange(util.Range{}))
	snap, err := db.GetSnapshot()
	check(err)
	snapSeq := seq
	for round := 1; round <= 2; round++ {
		b := new(leveldb.Batch)
		for i := round; i < n; i += 3 {
			b.Put(key(i), value(i, round))
			seq++
		}
		check(db.Write(b, nil))
		for i := round; i < n; i += 29 {
			check(db.Delete(key(i), nil))
			seq++
		}
		check(db.CompactRange(util.Range{Start: key(0), Limit: key(n / 2)}))
	}
	// Left in the journal.
	for i := 0; i < n; i += 41 {
		check(db.Put(key(i), []byte("in-the-journal"), nil))
		seq++
	}
	for i := 3; i < n; i += 97 {
		check(db.Delete(key(i), nil))
		seq++
	}
	expected := map[string]interface{}{
		"last_sequence": seq,
		"snapshot_seq":  snapSeq,
		"scan":          scan(db.NewIterator(nil, nil)),
		"gets":          gets(func(k []byte) ([]byte, error) { return db.Get(k, nil) }, n),
		"snapshot_scan": scan(snap.NewIterator(nil, nil)),
		"snapshot_gets": gets(func(k []byte) ([]byte, error) { return snap.Get(k, nil) }, n),
	}
	snap.Release()
	check(db.Close())
	for _, name := range []string{"LOG", "LOG.old"} {
		os.Remove(filepath.Join(dir, name))
	}
	f, err := os.Create(filepath.Join(dir, "expected.json"))
	check(err)
	check(json.NewEncoder(f).Encode(expected))
	check(f.Close())
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, _ := e.Info()
		fmt.Printf("%s %d\n", e.Name(), info.Size())
	}
}
