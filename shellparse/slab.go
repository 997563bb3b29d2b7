package shellparse

// slab hands out slices carved from larger arrays, so that the many small
// slices of a parse (each command's words, context and wrappers) cost a
// few allocations rather than one each. The slices never overlap, and
// each is capped at its length: it is its caller's alone, and appending to
// it copies.
type slab[T any] struct {
	free []T
	next int // the size of the next array
}

// take returns a slice of n zero elements; for n zero, an empty non-nil
// slice (as make would).
func (s *slab[T]) take(n int) []T {
	if n == 0 {
		return make([]T, 0)
	}
	if n > len(s.free) {
		s.next = min(max(2*s.next, 8), 256)
		s.free = make([]T, max(n, s.next))
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}
