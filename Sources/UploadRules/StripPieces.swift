import HTTPCore

/// Collects what a `MetadataStripper` writes for one input, so the pipeline can pass it on
/// after the stripper returns: pieces that lie within the input are kept as positions in it
/// (no copy), the stripper's own bytes (a rewritten header, a held segment) are copied into a
/// scratch buffer kept from read to read.
struct StripPieces: ByteSink {
    /// One piece: `count` bytes at `offset` in the input, or in `scratch`.
    struct Piece {
        var offset: Int
        var count: Int
        var inScratch: Bool
    }

    private(set) var input = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var pieces: [Piece] = []
    private(set) var scratch: [UInt8] = []

    /// Starts collecting the output for `input` (the previous pieces are forgotten).
    mutating func reset(input: UnsafeRawBufferPointer) {
        self.input = input
        pieces.removeAll(keepingCapacity: true)
        scratch.removeAll(keepingCapacity: true)
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, let start = bytes.baseAddress else { return }
        if let base = input.baseAddress, start >= base, start + bytes.count <= base + input.count {
            pieces.append(Piece(offset: start - base, count: bytes.count, inScratch: false))
        } else {
            pieces.append(Piece(offset: scratch.count, count: bytes.count, inScratch: true))
            scratch.append(contentsOf: bytes)
        }
    }

    /// Calls `body` with each piece, in order.
    func visit(_ body: (UnsafeRawBufferPointer) -> Void) {
        scratch.withUnsafeBytes { scratchBytes in
            for piece in pieces {
                let source = piece.inScratch ? scratchBytes : input
                body(UnsafeRawBufferPointer(rebasing: source[piece.offset..<piece.offset + piece.count]))
            }
        }
    }
}
