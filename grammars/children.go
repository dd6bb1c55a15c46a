package grammars

// Children lists a node's children with one cgo call: a C loop over a tree cursor
// fills an array of TSNode values, which become *sitter.Node values here. Walking
// smacker's TreeCursor instead costs two cgo calls per child (GoToNextSibling,
// CurrentNode), each with cgo's pointer check on the cursor, and a map insertion in
// the tree's node cache (Tree.cachedNode): on the repositories of BenchmarkRealRepo
// that walk was 4-6% of structural chunking's CPU time.
//
// The C side declares the two tree-sitter types it passes by value, with the layout
// of tree-sitter's api.h (TSNode: uint32_t context[4], const void *id, const TSTree
// *tree; TSTreeCursor: const void *tree, const void *id, uint32_t context[3]), and
// calls tree-sitter's exported cursor functions, which smacker/go-tree-sitter links
// into the binary. A *sitter.Node is built from a TSNode by the layout of smacker's
// Node (a TSNode, then the *Tree that keeps the tree alive): mirrorOK checks the size
// of both, TestChildrenMatchCursor every field through smacker's own accessors, and
// Children falls back to the cursor walk when the sizes disagree (another version of
// the binding).

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <pthread.h>

typedef struct { uint32_t context[4]; const void *id; const void *tree; } rcNode;
typedef struct { const void *tree; const void *id; uint32_t context[3]; } rcCursor;

extern rcCursor ts_tree_cursor_new(rcNode);
extern void ts_tree_cursor_reset(rcCursor *, rcNode);
extern void ts_tree_cursor_delete(rcCursor *);
extern bool ts_tree_cursor_goto_first_child(rcCursor *);
extern bool ts_tree_cursor_goto_next_sibling(rcCursor *);
extern rcNode ts_tree_cursor_current_node(const rcCursor *);
extern uint32_t ts_node_start_byte(rcNode);
extern uint32_t ts_node_end_byte(rcNode);
extern uint32_t ts_node_child_count(rcNode);
extern uint16_t ts_node_symbol(rcNode);
extern bool ts_node_is_named(rcNode);
extern bool ts_node_is_missing(rcNode);
extern bool ts_node_has_error(rcNode);

// rcInfo is what rc_children also reads of each child when asked (see NodeInfo).
typedef struct {
	uint32_t start, end, child_count;
	uint16_t symbol;
	uint8_t named, missing, has_error;
} rcInfo;

// rcBuf is one of the output arrays Children keeps (childBufLen nodes).
enum { RC_BUF_LEN = 64 };
typedef struct {
	rcNode nodes[RC_BUF_LEN];
	rcInfo info[RC_BUF_LEN];
} rcBuf;

// One cursor per thread, reset for each call: a cgo call runs on one thread from
// start to end, and making a cursor allocates its stack. It is thread-specific data
// with a destructor, so a thread that exits (a goroutine that ends locked to its
// thread) frees its cursor.
static pthread_key_t rc_key;
static pthread_once_t rc_key_once = PTHREAD_ONCE_INIT;
static bool rc_key_ok;

static void rc_cursor_free(void *p) {
	ts_tree_cursor_delete((rcCursor *)p);
	free(p);
}

static void rc_make_key(void) { rc_key_ok = pthread_key_create(&rc_key, rc_cursor_free) == 0; }

// rc_cursor returns the thread's cursor reset to n, or NULL when it cannot keep one
// (the caller then makes its own).
static rcCursor *rc_cursor(rcNode n) {
	pthread_once(&rc_key_once, rc_make_key);
	if (!rc_key_ok) return NULL;
	rcCursor *c = pthread_getspecific(rc_key);
	if (c) {
		ts_tree_cursor_reset(c, n);
		return c;
	}
	c = malloc(sizeof *c);
	if (!c) return NULL;
	*c = ts_tree_cursor_new(n);
	if (pthread_setspecific(rc_key, c) != 0) {
		rc_cursor_free(c);
		return NULL;
	}
	return c;
}

// rc_children writes the children of n, in order, to out (at most cap of them) and,
// when info is not NULL, what rcInfo holds of each to info; it returns how many
// children n has.
static uint32_t rc_children(rcNode n, rcNode *out, rcInfo *info, uint32_t cap) {
	rcCursor own;
	rcCursor *cur = rc_cursor(n);
	if (!cur) {
		own = ts_tree_cursor_new(n);
		cur = &own;
	}
	uint32_t k = 0;
	if (ts_tree_cursor_goto_first_child(cur)) {
		do {
			if (k < cap) {
				rcNode c = ts_tree_cursor_current_node(cur);
				out[k] = c;
				if (info) {
					info[k].start = ts_node_start_byte(c);
					info[k].end = ts_node_end_byte(c);
					info[k].child_count = ts_node_child_count(c);
					info[k].symbol = ts_node_symbol(c);
					info[k].named = ts_node_is_named(c);
					info[k].missing = ts_node_is_missing(c);
					info[k].has_error = ts_node_has_error(c);
				}
			}
			k++;
		} while (ts_tree_cursor_goto_next_sibling(cur));
	}
	if (cur == &own) ts_tree_cursor_delete(&own);
	return k;
}
*/
import "C"

import (
	"math"
	"sync"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
)

// nodeMirror has the layout of sitter.Node.
type nodeMirror struct {
	c C.rcNode
	t *sitter.Tree
}

// mirrorOK reports whether nodeMirror and sitter.Node have the same size: both are
// a TSNode and a pointer, so rcNode then has the size of smacker's TSNode too.
var mirrorOK = unsafe.Sizeof(nodeMirror{}) == unsafe.Sizeof(sitter.Node{})

// childBufLen is the capacity, in nodes, of the output arrays Children keeps.
const childBufLen = C.RC_BUF_LEN

// childBufs holds idle output arrays (nodes and their NodeInfo) for rc_children.
// They are C memory: a Go array of nodes passed to C is scanned by cgo's pointer
// check on every call (its elements hold pointers), which cost more than the walk
// itself. At most maxChildBufs are kept (one per goroutine chunking at once is
// enough); more are freed.
var childBufs struct {
	sync.Mutex
	free []*C.rcBuf
}

// maxChildBufs is the most idle output arrays childBufs keeps.
const maxChildBufs = 64

func getChildBuf() *C.rcBuf {
	childBufs.Lock()
	defer childBufs.Unlock()
	if k := len(childBufs.free); k > 0 {
		b := childBufs.free[k-1]
		childBufs.free = childBufs.free[:k-1]
		return b
	}
	return (*C.rcBuf)(C.malloc(C.size_t(unsafe.Sizeof(C.rcBuf{}))))
}

func putChildBuf(b *C.rcBuf) {
	childBufs.Lock()
	defer childBufs.Unlock()
	if len(childBufs.free) < maxChildBufs {
		childBufs.free = append(childBufs.free, b)
		return
	}
	C.free(unsafe.Pointer(b))
}

// Children returns n's children in order (named and anonymous, as a tree cursor
// visits them), or nil when it has none. One call costs one cgo call whatever the
// number of children (see the file comment); the nodes are valid while n's tree is
// open, as those of smacker's accessors are.
func Children(n *sitter.Node) []*sitter.Node {
	out, _ := children(n, false)
	return out
}

// NodeInfo is what ChildrenInfo reads of each child in the same C call: the values
// smacker's accessors of the same names would return, without a cgo call each.
type NodeInfo struct {
	Start, End uint32 // StartByte, EndByte: byte offsets in the parsed text
	ChildCount uint32
	Symbol     uint16 // Symbol: the node's type is Spec.TypeOfSymbol of it
	Named      bool   // IsNamed
	Missing    bool   // IsMissing
	HasError   bool   // HasError
}

// IsError reports whether the node is an ERROR node (smacker's Node.IsError).
func (i NodeInfo) IsError() bool { return i.Symbol == math.MaxUint16 }

// nodeInfo reads n's NodeInfo through smacker's accessors (a cgo call each).
func nodeInfo(n *sitter.Node) NodeInfo {
	return NodeInfo{Start: n.StartByte(), End: n.EndByte(), ChildCount: n.ChildCount(),
		Symbol: uint16(n.Symbol()), Named: n.IsNamed(), Missing: n.IsMissing(), HasError: n.HasError()}
}

// ChildrenInfo is Children that also returns a NodeInfo of each child (same index).
func ChildrenInfo(n *sitter.Node) ([]*sitter.Node, []NodeInfo) {
	return children(n, true)
}

func children(n *sitter.Node, withInfo bool) ([]*sitter.Node, []NodeInfo) {
	if n == nil {
		return nil, nil
	}
	if !mirrorOK {
		out := cursorChildren(n)
		var infos []NodeInfo
		if withInfo {
			infos = make([]NodeInfo, len(out))
			for i, c := range out {
				infos[i] = nodeInfo(c)
			}
		}
		return out, infos
	}
	m := (*nodeMirror)(unsafe.Pointer(n))
	buf := getChildBuf()
	defer putChildBuf(buf)
	// Plain pointer variables: given &buf.nodes[0] itself, cgo's pointer check would
	// box a copy of the whole array on every call.
	nodesPtr, infoPtr := &buf.nodes[0], (*C.rcInfo)(nil)
	if withInfo {
		infoPtr = &buf.info[0]
	}
	k := int(C.rc_children(m.c, nodesPtr, infoPtr, childBufLen))
	if k == 0 {
		return nil, nil
	}
	nodes, info := buf.nodes[:min(k, childBufLen)], buf.info[:min(k, childBufLen)]
	if k > childBufLen { // a wide node: once more with room for all
		wide := (*C.rcNode)(C.malloc(C.size_t(k) * C.size_t(unsafe.Sizeof(C.rcNode{}))))
		defer C.free(unsafe.Pointer(wide))
		if withInfo {
			info = make([]C.rcInfo, k) // Go memory: it holds no pointers, so cgo's check of it is cheap
			infoPtr = &info[0]
		}
		C.rc_children(m.c, wide, infoPtr, C.uint32_t(k))
		nodes = unsafe.Slice(wide, k)
	}
	slab := make([]nodeMirror, k) // one allocation for the k nodes
	out := make([]*sitter.Node, k)
	for i := range slab {
		slab[i] = nodeMirror{c: nodes[i], t: m.t}
		out[i] = (*sitter.Node)(unsafe.Pointer(&slab[i]))
	}
	var infos []NodeInfo
	if withInfo {
		infos = make([]NodeInfo, k)
		for i := range infos {
			c := &info[i]
			infos[i] = NodeInfo{Start: uint32(c.start), End: uint32(c.end), ChildCount: uint32(c.child_count),
				Symbol: uint16(c.symbol), Named: c.named != 0, Missing: c.missing != 0, HasError: c.has_error != 0}
		}
	}
	return out, infos
}

// StartByte returns n.StartByte() without a cgo call: a TSNode holds its start byte
// (context[0]; ts_node_start_byte in tree-sitter's lib/src/node.c returns it), so it
// is read here by the layout of smacker's Node (see the file comment).
func StartByte(n *sitter.Node) int {
	if !mirrorOK {
		return int(n.StartByte())
	}
	return int((*nodeMirror)(unsafe.Pointer(n)).c.context[0])
}
