import HTTP1

/// The chunked decoder whole and split at a point from the first byte: same data, same
/// verdict, same end.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunked(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let input = Array(bytes.dropFirst())
    let cut = input.isEmpty ? 0 : Int(bytes[0]) % (input.count + 1)
    let whole = decode(input, cuts: [])
    let split = decode(input, cuts: [cut])
    precondition(whole == split, "chunked decoding differs across a split at \(cut)")
    return 0
}

struct Decoded: Equatable {
    var data: [UInt8] = []
    var consumed = 0
    var complete = false
    var failed = false
}

func decode(_ input: [UInt8], cuts: [Int]) -> Decoded {
    var decoder = ChunkedDecoder(lineLimit: 256)
    var result = Decoded()
    var start = 0
    for cut in cuts + [input.count] where cut >= start {
        do throws(HTTP1Error) {
            result.consumed += try decoder.decode(Array(input[start..<cut])) { result.data += $0 }
        } catch {
            result.failed = true
            result.data = []
            result.consumed = 0
            return result
        }
        start = cut
        if decoder.isComplete { break }
    }
    result.complete = decoder.isComplete
    return result
}
