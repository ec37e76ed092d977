// Command h2body writes one upload body of the benchmark's payload to a file, for load
// generators that send a body from a file (h2load -d): the multipart prefix, the content of
// the file with the given seed and size (see package payload), and the suffix. Every request
// h2load sends from it is the same body, which the sink verifies like any other (the X-Bench
// header names the same seed and size).
package main

import (
	"bufio"
	"flag"
	"log"
	"os"

	"formgate.bench/payload"
)

func main() {
	out := flag.String("out", "", "the file to write")
	seed := flag.Uint64("seed", 1, "the content's seed")
	size := flag.Int64("size", 4096, "file bytes")
	flag.Parse()
	if *out == "" {
		log.Fatal("h2body: -out is required")
	}
	if err := write(*out, *seed, *size); err != nil {
		log.Fatal(err)
	}
}

// write writes the body to a temporary file and renames it into place, so a file of that
// name is always whole.
func write(path string, seed uint64, size int64) error {
	file, err := os.Create(path + ".partial")
	if err != nil {
		return err
	}
	defer file.Close()
	writer := bufio.NewWriterSize(file, payload.BlockSize)
	writer.Write(payload.Prefix)
	buffer := payload.Block()
	for offset := int64(0); offset < size; offset += payload.BlockSize {
		n := size - offset
		if n > payload.BlockSize {
			n = payload.BlockSize
		}
		payload.Fill(buffer[:n], seed, offset)
		writer.Write(buffer[:n])
	}
	writer.Write(payload.Suffix)
	if err := writer.Flush(); err != nil {
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	return os.Rename(path+".partial", path)
}
