package batch

import (
	"context"
	"sync"

	"github.com/repoctx/repoctx/snapshot"
)

// snapCache keeps the answerers of the snapshots in use, opening each once however
// many workers ask for it at the same time, and keeps up to idleMax unused ones open
// (never one that a datapoint handed to a worker still needs, then the one whose
// latest datapoint comes first in the input: a snapshot whose last datapoint finished
// late is not kept over the one the next datapoints need) for datapoints of the same snapshot that follow (Run keeps
// one: datapoints of a snapshot usually come together).
type snapCache struct {
	method  Method
	src     snapshot.Source
	idleMax int

	mu      sync.Mutex
	m       map[string]*opening
	idle    []string       // names of entries with no user
	pending map[string]int // datapoints handed to workers that have not acquired yet, by snapshot
}

// opening is one snapshot's answerer, being opened or open.
type opening struct {
	name      string
	ready     chan struct{} // closed once ans or err is set
	ans       Answerer
	err       error
	users     int
	last      int  // input index of the latest datapoint that acquired it
	sharedLSA bool // opened with its repository's shared LSA model
}

func newSnapCache(m Method, src snapshot.Source, idleMax int) *snapCache {
	return &snapCache{method: m, src: src, idleMax: max(idleMax, 0), m: map[string]*opening{}, pending: map[string]int{}}
}

// expect records that a datapoint of snapshot name is on its way to a worker: until it
// acquires (or gives up, see unexpect), an idle opening of name is not closed.
func (c *snapCache) expect(name string) {
	c.mu.Lock()
	c.pending[name]++
	c.mu.Unlock()
}

// unexpect withdraws an expect whose datapoint will not acquire.
func (c *snapCache) unexpect(name string) {
	c.mu.Lock()
	c.done(name)
	c.mu.Unlock()
}

// done counts down name's pending datapoints (c.mu held).
func (c *snapCache) done(name string) {
	if c.pending[name] <= 1 {
		delete(c.pending, name)
	} else {
		c.pending[name]--
	}
}

// acquire returns the opening of d's snapshot (d is the input's datapoint i) with its answerer ready, opening it
// if needed; opened reports whether this call opened it (for statistics). Each
// acquire that returns no error must be paired with a release of the opening.
func (c *snapCache) acquire(ctx context.Context, i int, d *Datapoint) (o *opening, opened bool, err error) {
	name := d.SnapshotName()
	c.mu.Lock()
	c.done(name)
	if o = c.m[name]; o != nil {
		o.users++
		o.last = max(o.last, i)
		c.unidle(name)
		c.mu.Unlock()
		select {
		case <-o.ready:
		case <-ctx.Done():
			c.release(o)
			return nil, false, ctx.Err()
		}
		if o.err != nil {
			err := o.err
			c.release(o)
			return nil, false, err
		}
		return o, false, nil
	}
	o = &opening{name: name, ready: make(chan struct{}), users: 1, last: i}
	c.m[name] = o
	c.mu.Unlock()
	snap, err := c.src.Open(name)
	if err == nil {
		o.ans, err = c.method.Open(ctx, snap, d.Repo)
		if s, ok := o.ans.(interface{ shared() bool }); ok && err == nil {
			o.sharedLSA = s.shared()
		}
	}
	o.err = err
	close(o.ready)
	if err != nil {
		c.release(o)
		return o, true, err
	}
	return o, true, nil
}

// release ends one use of o. An opening that failed is forgotten with its last user,
// so that a later datapoint tries again (e.g. after a cancelled build); an open one
// joins the idle list, whose entries beyond idleMax are closed, those whose latest
// datapoint comes first in the input first.
func (c *snapCache) release(o *opening) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o.users--
	if o.users > 0 {
		return
	}
	if o.err != nil {
		if c.m[o.name] == o {
			delete(c.m, o.name)
		}
		return
	}
	c.idle = append(c.idle, o.name)
	// Idle openings that a datapoint on its way to a worker needs are kept beyond
	// idleMax (they will be acquired soon, leaving the list); of the others, those
	// whose latest datapoint came first go first.
	for {
		k, free := -1, 0
		for i, n := range c.idle {
			if c.pending[n] > 0 {
				continue
			}
			free++
			if k < 0 || c.m[n].last < c.m[c.idle[k]].last {
				k = i
			}
		}
		if free <= c.idleMax {
			return
		}
		old := c.idle[k]
		c.idle = append(c.idle[:k], c.idle[k+1:]...)
		if e := c.m[old]; e != nil {
			delete(c.m, old)
			e.ans.Close()
		}
	}
}

// unidle removes name from the idle list (c.mu held).
func (c *snapCache) unidle(name string) {
	for i, n := range c.idle {
		if n == name {
			c.idle = append(c.idle[:i], c.idle[i+1:]...)
			return
		}
	}
}

// closeAll closes every answerer; the cache must not be used afterwards.
func (c *snapCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, o := range c.m {
		select {
		case <-o.ready:
			if o.err == nil && o.ans != nil {
				o.ans.Close()
			}
		default: // still opening: its opener closes nothing; Run waits for the workers first
		}
		delete(c.m, name)
	}
	c.idle = nil
}
