package batch

import (
	"context"
	"sync"

	"github.com/repoctx/repoctx/workspace"
)

// snapCache keeps the answerers of the snapshots in use, opening each once however
// many workers ask for it at the same time, and keeps up to idleMax unused ones open
// (least recently used first out) for datapoints of the same snapshot that follow
// (Run keeps one: datapoints of a snapshot usually come together).
type snapCache struct {
	method  Method
	src     workspace.Source
	idleMax int

	mu   sync.Mutex
	m    map[string]*opening
	idle []string // names of entries with no user, least recently used first
}

// opening is one snapshot's answerer, being opened or open.
type opening struct {
	name      string
	ready     chan struct{} // closed once ans or err is set
	ans       Answerer
	err       error
	users     int
	sharedLSA bool // opened with its repository's shared LSA model
}

func newSnapCache(m Method, src workspace.Source, idleMax int) *snapCache {
	return &snapCache{method: m, src: src, idleMax: max(idleMax, 0), m: map[string]*opening{}}
}

// acquire returns the opening of d's snapshot with its answerer ready, opening it
// if needed; opened reports whether this call opened it (for statistics). Each
// acquire that returns no error must be paired with a release of the opening.
func (c *snapCache) acquire(ctx context.Context, d *Datapoint) (o *opening, opened bool, err error) {
	name := d.SnapshotName()
	c.mu.Lock()
	if o = c.m[name]; o != nil {
		o.users++
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
	o = &opening{name: name, ready: make(chan struct{}), users: 1}
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
// joins the idle list, whose oldest entries beyond idleMax are closed.
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
	for len(c.idle) > c.idleMax {
		old := c.idle[0]
		c.idle = c.idle[1:]
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
