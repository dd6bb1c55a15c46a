package retrieve

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// EmbedCacheFile is the name of the embedding cache's database file inside the cache
// directory ([BuildOptions.EmbedCache]).
const EmbedCacheFile = "embeddings.bolt"

// DefaultEmbedCacheTimeout is how long a build waits, by default, for another
// process's lock on the embedding cache before building without it
// ([BuildOptions.EmbedCacheTimeout]).
const DefaultEmbedCacheTimeout = 30 * time.Second

// embedCache stores chunk embeddings on disk, keyed by (model ID, SHA-256 of the text
// and the kept end), so that a snapshot sharing chunks with an earlier one embeds only
// the chunks that changed.
//
// It is a bbolt database (a single file, one bucket per model ID) shared by all builds
// of a process; the value is one flag byte (bit 0: the text was truncated) followed by
// the vector as little-endian float32. bbolt locks the file for one writing process at a
// time: a build of another process waits at most [BuildOptions.EmbedCacheTimeout], then goes on
// without the cache. The cache only grows; delete the file to empty it.
type embedCache struct {
	shared *sharedDB
	bucket []byte
	dim    int
}

type sharedDB struct {
	db   *bolt.DB
	path string
	refs int
}

var openCaches struct {
	sync.Mutex
	m map[string]*sharedDB
}

// openEmbedCache opens (creating it if needed) the cache in dir for the model id.
func openEmbedCache(dir, id string, dim int, timeout time.Duration) (*embedCache, error) {
	if timeout <= 0 {
		timeout = DefaultEmbedCacheTimeout
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("retrieve: embedding cache: %w", err)
	}
	path, err := filepath.Abs(filepath.Join(dir, EmbedCacheFile))
	if err != nil {
		return nil, fmt.Errorf("retrieve: embedding cache: %w", err)
	}
	openCaches.Lock()
	defer openCaches.Unlock()
	if openCaches.m == nil {
		openCaches.m = map[string]*sharedDB{}
	}
	s := openCaches.m[path]
	if s == nil {
		db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: timeout, NoFreelistSync: true})
		if err != nil {
			return nil, fmt.Errorf("retrieve: open embedding cache %s: %w", path, err)
		}
		s = &sharedDB{db: db, path: path}
		openCaches.m[path] = s
	}
	s.refs++
	return &embedCache{shared: s, bucket: []byte(id), dim: dim}, nil
}

// close releases the cache; the database closes with its last user.
func (c *embedCache) close() error {
	if c == nil || c.shared == nil {
		return nil
	}
	openCaches.Lock()
	defer openCaches.Unlock()
	s := c.shared
	c.shared = nil
	s.refs--
	if s.refs > 0 {
		return nil
	}
	delete(openCaches.m, s.path)
	return s.db.Close()
}

// cacheKey is the key of text embedded keeping the given end.
func cacheKey(text string, keep KeepEnd) [33]byte {
	var k [33]byte
	sum := sha256.Sum256([]byte(text))
	copy(k[:], sum[:])
	k[32] = byte(keep)
	return k
}

// get looks keys up; a miss (or a damaged value) gives a nil vector.
func (c *embedCache) get(keys [][33]byte) ([][]float32, []bool, error) {
	vecs := make([][]float32, len(keys))
	trunc := make([]bool, len(keys))
	err := c.shared.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(c.bucket)
		if b == nil {
			return nil
		}
		for i := range keys {
			v := b.Get(keys[i][:])
			if len(v) != 1+4*c.dim {
				continue
			}
			vec := make([]float32, c.dim)
			for j := range vec {
				vec[j] = math.Float32frombits(binary.LittleEndian.Uint32(v[1+4*j:]))
			}
			vecs[i], trunc[i] = vec, v[0]&1 != 0
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("retrieve: read embedding cache: %w", err)
	}
	return vecs, trunc, nil
}

// put stores vectors in one transaction.
func (c *embedCache) put(keys [][33]byte, vecs [][]float32, trunc []bool) error {
	err := c.shared.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(c.bucket)
		if err != nil {
			return err
		}
		for i := range keys {
			if len(vecs[i]) != c.dim {
				continue
			}
			v := make([]byte, 1+4*c.dim)
			if trunc[i] {
				v[0] = 1
			}
			for j, x := range vecs[i] {
				binary.LittleEndian.PutUint32(v[1+4*j:], math.Float32bits(x))
			}
			if err := b.Put(keys[i][:], v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("retrieve: write embedding cache: %w", err)
	}
	return nil
}
