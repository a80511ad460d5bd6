package diffcore

import "github.com/tgp-go/tgp/internal/xdiff"

// Spans are a file's chunk counts (diffcore-delta.c's spanhash_top):
// chunk hash → bytes.
type Spans map[uint32]int

// HashSpans is hash_chars: content is cut into chunks at each newline or
// every 64 bytes and each chunk's hash counts its bytes; in text the CR of
// a CRLF is skipped, so a change of line endings alone keeps the score.
func HashSpans(data []byte, text bool) Spans {
	out := Spans{}
	var accum1, accum2 uint32
	n := 0
	for i := 0; i < len(data); i++ {
		c := uint32(data[i])
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue
		}
		old1 := accum1
		accum1 = (accum1 << 7) ^ (accum2 >> 25)
		accum2 = (accum2 << 7) ^ (old1 >> 25)
		accum1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		out[(accum1+accum2*0x61)%hashBase] += n
		n, accum1, accum2 = 0, 0, 0
	}
	return out
}

// ContentSpans is HashSpans with text told from binary by content
// (buffer_is_binary), as git does when no attribute decides.
func ContentSpans(data []byte) Spans { return HashSpans(data, !xdiff.IsBinary(data)) }

// SizesAllow is estimate_similarity's first cut: two files whose sizes
// differ by more than minScore allows cannot reach it, and are not read.
func SizesAllow(srcSize, dstSize, minScore int) bool {
	maxSize, baseSize := max(srcSize, dstSize), min(srcSize, dstSize)
	return maxSize*(MaxScore-minScore) >= (maxSize-baseSize)*MaxScore
}

// Similarity is the rest of estimate_similarity (diffcore_count_changes):
// the bytes of src's chunks found again in dst, over the larger size, in
// MaxScore units. An empty destination scores 0.
func Similarity(src Spans, srcSize int, dst Spans, dstSize int) int {
	if dstSize == 0 {
		return 0
	}
	copied := 0
	for h, sc := range src {
		copied += min(sc, dst[h])
	}
	return copied * MaxScore / max(srcSize, dstSize)
}

// Estimate is estimate_similarity of two regular files' contents, text
// told from binary by content: 0 when the sizes cannot reach minScore.
func Estimate(src, dst []byte, minScore int) int {
	return EstimateAs(src, !xdiff.IsBinary(src), dst, !xdiff.IsBinary(dst), minScore)
}

// EstimateAs is Estimate with each side's text or binary said by the
// caller, as git's diff_filespec_is_binary says it: a path's diff
// attribute (or its driver's binary setting) first, the content only
// when none decides. The two hash differently (a CRLF's CR counts only
// in binary), so a file the attributes make binary pairs with its text
// copy only when their bytes agree.
func EstimateAs(src []byte, srcText bool, dst []byte, dstText bool, minScore int) int {
	if !SizesAllow(len(src), len(dst), minScore) || len(dst) == 0 {
		return 0
	}
	return Similarity(HashSpans(src, srcText), len(src), HashSpans(dst, dstText), len(dst))
}
