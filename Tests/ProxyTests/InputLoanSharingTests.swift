import EventLoop
import HTTPCore
import MultipartEncoding
import MultipartParsing
import Testing

/// `InputLoan.write(_:to:sharing:)`: a moved piece is also shared by reference (what a large
/// file's digest hashes on another thread). At every split point of the input, with the move
/// cap reached mid-file, the output is still the copying re-encoder's, byte for byte; what the
/// sharer gets, in order, is exactly the file bytes that moved, each piece once, with a
/// release each; and the shared bytes stay valid after the output and input are drained and
/// freed, until released.
@Suite struct InputLoanSharingTests {
    typealias Loan = InputLoanTests

    /// What a sharer got: the bytes of each piece (read when the release is still held, after
    /// the output is gone) and the releases.
    final class Shared {
        var pieces: [[UnsafeRawBufferPointer]] = []
        var releases: [() -> Void] = []
    }

    struct SharingSink: ByteSink {
        let destination: Loan.Destination
        let shared: Shared

        /// Copies or moves, as the plain loan sink does.
        mutating func write(_ bytes: UnsafeRawBufferPointer) {
            var plain = Loan.LoanSink(destination: destination)
            plain.write(bytes)
        }

        /// Shares through the loan, as the proxy's body sink does.
        mutating func shareWrite(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard destination.loan.isOpen else {
                destination.output.buffer.add(bytes)
                return false
            }
            let shared = self.shared
            return destination.loan.write(
                bytes, to: destination.output.buffer,
                sharing: { regions, release in
                    shared.pieces.append(regions)
                    shared.releases.append(release)
                })
        }
    }

    /// Re-encodes; a file part's content goes through `shareWrite`.
    struct Reencoder: MultipartEventHandler {
        var encoder = MultipartEncoder(boundary: try! Boundary(Array("OutBoundary42".utf8)))
        var sink: SharingSink
        var inFile = false
        /// The file bytes whose write said they would be shared, in order.
        var sharedBytes: [UInt8] = []

        mutating func handle(_ event: MultipartEvent) {
            switch event {
            case .partBegin(let head):
                inFile = head.disposition.filename != nil
                try! encoder.beginPart(head.disposition, into: &sink)
            case .body(let bytes):
                if inFile {
                    if sink.shareWrite(bytes) { sharedBytes += bytes }
                } else {
                    encoder.writeBody(bytes, into: &sink)
                }
            case .partEnd:
                inFile = false
            case .end:
                try! encoder.finish(into: &sink)
            }
        }
    }

    /// Re-encodes `body` split at `splits`, sharing file bytes; returns the output, the bytes
    /// the writes said were shared, and what the sharer got (read after the output and the
    /// input were drained and freed), releasing everything after.
    static func reencode(_ body: [UInt8], splits: [Int], maximumMoves: Int = 256)
        -> (output: [UInt8], declared: [UInt8], got: [UInt8], pieces: Int, releases: Int)
    {
        let shared = Shared()
        var declared: [UInt8] = []
        var output: [UInt8] = []
        do {
            let input = Loan.input(body, splits: splits, trailing: [])
            let destination = Loan.Destination(maximumMoves: maximumMoves)
            var handler = Reencoder(sink: SharingSink(destination: destination, shared: shared))
            Loan.parse(body.count, of: input, through: destination, into: &handler)
            output = destination.output.buffer.remove(destination.output.buffer.count)
            declared = handler.sharedBytes
        }
        // The input, the loan and the output are gone: the shared chains must still be there.
        var got: [UInt8] = []
        for regions in shared.pieces {
            for region in regions { got += region }
        }
        let pieces = shared.pieces.count
        for release in shared.releases { release() }
        let releases = shared.releases.count
        shared.releases.removeAll()
        shared.pieces.removeAll()
        return (output, declared, got, pieces, releases)
    }

    @Test func everySplitPointSharesExactlyTheMovedFileBytes() {
        let body = Loan.body(fileBytes: 9_000)
        let expected = Loan.copied(body)
        for split in 1..<body.count {
            let result = Self.reencode(body, splits: [split])
            #expect(result.output == expected, "split at \(split)")
            #expect(result.got == result.declared, "split at \(split)")
            #expect(result.pieces == result.releases, "split at \(split)")
            if result.output != expected || result.got != result.declared { return }
        }
        let whole = Self.reencode(body, splits: [])
        #expect(whole.declared.count >= 9_000 - 64)
        #expect(whole.got == whole.declared)
    }

    @Test func aFileEndingOnAChainEndIsSharedWhole() {
        let body = Loan.body(fileBytes: 6_000)
        let tail =
            "\r\n--\(Loan.boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nend\r\n--\(Loan.boundary)--\r\n"
        let fileEnd = body.count - tail.utf8.count
        let fileStart = fileEnd - 6_000
        for splits in [
            [fileEnd], [fileStart, fileEnd], [fileStart + 3_000, fileEnd], [fileEnd - 1, fileEnd + 1],
        ] {
            let result = Self.reencode(body, splits: splits)
            #expect(result.output == Loan.copied(body), "splits \(splits)")
            #expect(result.got == result.declared, "splits \(splits)")
        }
        let whole = Self.reencode(body, splits: [fileStart, fileEnd])
        #expect(whole.got == Array(body[fileStart..<fileEnd]))
    }

    @Test(arguments: [0, 1, 2, 5])
    func theMoveCapReachedMidFileSharesOnlyWhatMoved(cap: Int) {
        let body = Loan.body(fileBytes: 64_000)
        let splits = Array(stride(from: 4_096, to: body.count, by: 4_096))
        let result = Self.reencode(body, splits: splits, maximumMoves: cap)
        #expect(result.output == Loan.copied(body))
        #expect(result.got == result.declared)
        #expect(result.pieces <= cap)
        #expect(cap == 0 ? result.got.isEmpty : !result.got.isEmpty)
        #expect(result.pieces == result.releases)
    }
}
