package index

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/repoctx/repoctx/chunker"
	"github.com/repoctx/repoctx/retrieve"
	"github.com/repoctx/repoctx/snapshot"
	"github.com/repoctx/repoctx/store"
)

// UpdateStats describes what [Index.Update] did.
type UpdateStats struct {
	Stats
	// NewChunks counts the chunks of the files chunked now; Embedded the chunk texts
	// embedded now (the others' vectors were stored).
	NewChunks, Embedded int
	// Model names the dense model the vectors are of ("" for none).
	Model string
	// Split and Truncated count the chunk texts over the model's input limit embedded
	// now (for a full update: the view's chunks) in pieces, and still truncated (see
	// [retrieve.DenseInfo]); TruncatedIDs names the truncated chunks.
	Split, Truncated int
	TruncatedIDs     []string
	// Full reports that no fast path applied and the whole view was made ([Index.View]):
	// the repository's first run, or a dense model fitted on each view.
	Full bool
}

// Update brings the store up to date with a snapshot, doing only the work its changed
// files need: files whose chunks (and symbols) are stored are not read beyond hashing
// them, the others are chunked and their chunks embedded and stored; no view is made,
// unless Options.StoreViews is ViewsStored and the stored view is not of these files
// (the view is then made and stored).
// It is what `repoctx index` runs after an edit. The fast path needs a dense model
// that does not depend on the whole view: Options.Embedder, or Options.RepoLSA once
// the repository's model is stored (or no dense retriever); otherwise Update makes the
// whole view with [Index.View] (and says so in Full).
func (ix *Index) Update(ctx context.Context, snap snapshot.Snapshot) (UpdateStats, error) {
	var us UpdateStats
	if ix.isClosed() {
		return us, ErrClosed
	}
	opts := ix.opts
	rs := ix.recs
	var model *retrieve.LSA
	if opts.Embedder == nil && opts.Dense == retrieve.DenseLSA {
		if opts.RepoLSA {
			model = storedRepoLSA(rs, ix.repo, opts)
		}
		if model == nil {
			return ix.fullUpdate(ctx, snap)
		}
	}
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", a...)
		}
	}
	key, files, skipped, err := ix.viewKey(ctx, snap, logf)
	if err != nil {
		return us, err
	}
	us.Skipped, us.Files = skipped, len(files)
	ch, err := chunker.New(opts.Strategy, opts.Chunk)
	if err != nil {
		return us, err
	}
	defer ch.Close()
	var emb retrieve.Embedder
	switch {
	case opts.Embedder != nil:
		emb = opts.Embedder
	case model != nil:
		emb = model
	}
	if emb != nil && emb.Dim() <= 0 {
		emb = nil
	}
	var newChunks, unembedded []chunker.Chunk
	var newSums, unembeddedSums [][32]byte
	var embeddedKeys []store.Key // files whose chunk texts all have vectors once the new ones are stored
	for i := range files {
		if err := ctx.Err(); err != nil {
			return us, err
		}
		sf := &files[i]
		skey := chunkKey(opts, *sf)
		if rs.Has(store.Key{Kind: store.KindChunks, Hash: skey}) && (!opts.Symbols || rs.Has(store.Key{Kind: store.KindSymbols, Hash: symbolKey(sf.path, sf.sum)})) {
			us.Reused++
			if emb != nil {
				// Chunked before, perhaps under another dense model (`index` with LSA,
				// then with --model): its texts may have no vectors under this one.
				if ek := embeddedKey(emb.ID(), skey); !rs.Has(ek) {
					if cs, sums, ok := storedChunks(rs, skey); ok {
						unembedded, unembeddedSums = append(unembedded, cs...), append(unembeddedSums, sums...)
						embeddedKeys = append(embeddedKeys, ek)
					}
				}
			}
			continue
		}
		raw, err := sf.content()
		if err == nil {
			var f *chunker.File
			if f, err = chunker.Decode(sf.path, raw, opts.MaxFileBytes); err == nil {
				err = storeFile(rs, f, sf, skey, ch, opts, &newChunks, &newSums, &us)
			}
		}
		if err != nil {
			us.Skipped++
			logf("skip %s/%s: %v", snap.Name(), sf.path, err)
			continue
		}
		us.Chunked++
		if emb != nil {
			embeddedKeys = append(embeddedKeys, embeddedKey(emb.ID(), skey))
		}
	}
	us.NewChunks = len(newChunks)
	if emb != nil {
		us.Model = emb.ID()
		if err := storeVectors(ctx, rs, emb, append(newChunks, unembedded...), append(newSums, unembeddedSums...), &us); err != nil {
			return us, err
		}
		for _, k := range embeddedKeys {
			rs.Put(k, []byte{})
		}
	}
	us.Built = us.Chunked > 0 || us.Embedded > 0
	n, err := rs.Flush()
	us.CacheWriteFailures += n
	if err != nil {
		return us, err
	}
	if opts.StoreViews == ViewsStored && opts.Extra == nil && storesViews(opts, false) && !ix.viewIsStored(snap, key) {
		// The stored view is of other files (or of none, or of an older format): make
		// the view and store it, so that the next query or server start reads it back.
		v, err := ix.View(ctx, snap)
		if err != nil {
			return us, err
		}
		us.CacheWriteFailures += v.Stats().CacheWriteFailures
		v.Close()
	}
	return us, nil
}

// viewIsStored reports whether the stored view of snap is the one of its files under
// key (viewKey's) and these settings.
func (ix *Index) viewIsStored(snap snapshot.Snapshot, key string) bool {
	name, stamp := ix.viewStoreName(snap.Name()), ix.viewStamp(limitKey(key, sha256.New()))
	if k, ok := ix.recs.Get(storedViewKey(name)); !ok || string(k) != stamp {
		return false
	}
	// The record says so; the file must too (it may have been deleted or damaged
	// since, and readers then make the view from the files on every run). Its head
	// only, as writeView starts it: its magic and key.
	head := viewMagic + string(binary.AppendUvarint(nil, uint64(len(stamp)))) + stamp
	b, ok := ix.recs.ViewPrefix(name, len(head))
	return ok && string(b) == head
}

// embeddedKey is the key of the marker that every chunk text of the file version
// whose chunk record is skey has a vector under model id.
func embeddedKey(id string, skey [32]byte) store.Key {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00embedded\x00%s\x00%d\x00", store.Version, id, retrieve.KeepHead)
	h.Write(skey[:])
	k := store.Key{Kind: store.KindEmbedded}
	h.Sum(k.Hash[:0])
	return k
}

// storedChunks returns the chunks and their text sums of the stored chunk record
// skey (storeVectors then embeds those whose vectors are missing); ok is false when
// the record is missing or damaged.
func storedChunks(rs *store.Records, skey [32]byte) (cs []chunker.Chunk, sums [][32]byte, ok bool) {
	b, ok := rs.Get(store.Key{Kind: store.KindChunks, Hash: skey})
	if !ok {
		return nil, nil, false
	}
	rec, err := decodeChunkRecord(b)
	if err != nil {
		return nil, nil, false
	}
	return rec.Chunks, rec.Sums, true
}

// storeFile chunks f (with its symbols when asked) and stores both records, appending
// the chunks to out; chunks made under a transient limit (chunker.Limit) are not stored.
func storeFile(rs *store.Records, f *chunker.File, sf *sourceFile, skey [32]byte, ch chunker.Chunker, opts Options, out *[]chunker.Chunk, sums *[][32]byte, us *UpdateStats) error {
	cs, syms, err := chunkOne(f, ch, opts.Symbols)
	if err != nil {
		return err
	}
	rec := newChunkRecord(cs, f.Lossy, f.Encoding)
	transient := chunker.FileLimit(cs).Transient() // never stored: chunked again next time
	if transient {
		us.Limited++
	} else {
		rs.Put(store.Key{Kind: store.KindChunks, Hash: skey}, rec.encode())
	}
	if opts.Symbols && !transient {
		if syms == nil {
			ex := extractors.Get().(*extractorT)
			syms, _ = ex.Extract(f)
			extractors.Put(ex)
		}
		if syms != nil {
			rs.Put(store.Key{Kind: store.KindSymbols, Hash: symbolKey(sf.path, sf.sum)}, encodeSymbols(syms))
		}
	}
	*out = append(*out, cs...)
	*sums = append(*sums, rec.Sums...)
	return nil
}

// storeVectors embeds the texts of chunks whose vectors under emb are not stored yet,
// and stores them.
func storeVectors(ctx context.Context, rs *store.Records, emb retrieve.Embedder, chunks []chunker.Chunk, sums [][32]byte, us *UpdateStats) error {
	id := emb.ID()
	var texts, ids []string
	var keys [][32]byte
	seen := map[[32]byte]bool{}
	for i := range chunks {
		if seen[sums[i]] || rs.Has(vectorKey(id, sums[i])) {
			continue
		}
		seen[sums[i]] = true
		texts, ids, keys = append(texts, chunks[i].Text), append(ids, chunks[i].ID), append(keys, sums[i])
	}
	if len(texts) == 0 {
		return nil
	}
	_, isLSA := emb.(*retrieve.LSA)
	vecs, status, err := retrieve.EmbedTexts(ctx, emb, texts, 0, !isLSA)
	if err != nil {
		return err
	}
	var d retrieve.DenseInfo
	for i := range texts {
		putVector(rs, id, keys[i], vecs[i], status[i])
		d.Count(status[i], ids[i])
	}
	us.Embedded = len(texts)
	us.Split, us.Truncated, us.TruncatedIDs = d.Split, d.Truncated, d.TruncatedIDs
	return nil
}

// repoLSAKey is the store key of the repository's one LSA model (Options.RepoLSA).
func repoLSAKey(repo string, opts Options) store.Key {
	return lsaKey(opts.LSADim, repoFitKey(repo))
}

// storedRepoLSA returns the repository's stored LSA model, or nil.
func storedRepoLSA(rs *store.Records, repo string, opts Options) *retrieve.LSA {
	b, ok := rs.Get(repoLSAKey(repo, opts))
	if !ok {
		return nil
	}
	m, label, err := readLabeledLSA(b)
	if err != nil {
		return nil
	}
	return m.Labeled(label)
}

// fullUpdate makes the whole view (and closes it).
func (ix *Index) fullUpdate(ctx context.Context, snap snapshot.Snapshot) (UpdateStats, error) {
	v, err := ix.View(ctx, snap)
	if err != nil {
		return UpdateStats{}, err
	}
	defer v.Close()
	d := v.Retriever().DenseInfo()
	us := UpdateStats{Stats: v.Stats(), Full: true, Model: d.Model, Embedded: d.Embedded, NewChunks: -1,
		Split: d.Split, Truncated: d.Truncated, TruncatedIDs: d.TruncatedIDs}
	return us, nil
}
