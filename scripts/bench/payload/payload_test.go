package payload

import (
	"math/rand"
	"testing"
)

// Fill, FillAny and Check agree on every alignment, and Check finds a flipped byte.
func TestFillAndCheckAgree(t *testing.T) {
	const size = 3*BlockSize + 12345
	whole := make([]byte, size)
	buffer := Block()
	for offset := int64(0); offset < size; offset += BlockSize {
		n := int64(BlockSize)
		if size-offset < n {
			n = size - offset
		}
		Fill(buffer[:n], 42, offset)
		copy(whole[offset:], buffer[:n])
	}
	other := make([]byte, size)
	FillAny(other, 42, 0)
	if string(other) != string(whole) {
		t.Fatal("Fill and FillAny differ")
	}
	random := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		start := random.Int63n(size)
		end := start + random.Int63n(size-start+1)
		if at := Check(whole[start:end], 42, start); at != -1 {
			t.Fatalf("clean [%d,%d) reported at %d", start, end, at)
		}
		if end > start {
			flip := start + random.Int63n(end-start)
			whole[flip] ^= 0x20
			if at := Check(whole[start:end], 42, start); at != flip {
				t.Fatalf("flip at %d in [%d,%d) reported at %d", flip, start, end, at)
			}
			whole[flip] ^= 0x20
		}
	}
	if Check(whole[:100], 43, 0) == -1 {
		t.Fatal("another seed's content passed")
	}
}

func TestSpecRoundTrip(t *testing.T) {
	spec := Spec{Digests, 99, 4096}
	back, err := ParseSpec(spec.String())
	if err != nil || back != spec {
		t.Fatalf("%v %v", back, err)
	}
	if _, err := ParseSpec("bogus 1 2"); err == nil {
		t.Fatal("bogus mode accepted")
	}
}
