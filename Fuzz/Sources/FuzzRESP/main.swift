import SharedState

/// RESP2 replies from a Redis that may lie, on arbitrary bytes: the first byte picks where the
/// rest is cut in two (and, with a small reply limit, a second reader). Properties: the values
/// and the error are the same whichever cut (a push parser never guesses a reply from what has
/// arrived); an error is at a byte of the input and stays; what a reader holds for a reply
/// still arriving never passes its limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let wire = Array(bytes.dropFirst())
    let cut = wire.isEmpty ? 0 : Int(bytes[0]) % (wire.count + 1)
    for limits in [RESPLimits(), RESPLimits(line: 64, bulk: 256, elements: 16, depth: 2, reply: 512)] {
        let whole = read([wire[...]], limits: limits)
        let split = read([wire[..<cut], wire[cut...]], limits: limits)
        precondition(whole.values == split.values, "a cut changed the replies")
        precondition(whole.error == split.error, "a cut changed the error")
        if let error = whole.error {
            precondition(
                error.offset >= 0 && error.offset < Int64(max(1, wire.count)), "an error outside the input")
        }
        precondition(whole.held <= limits.reply && split.held <= limits.reply, "a reply held past its limit")
    }
    return 0
}

private func read(_ pieces: [ArraySlice<UInt8>], limits: RESPLimits) -> (
    values: [RESPValue], error: RESPError?, held: Int
) {
    var reader = RESPReader(limits: limits)
    var values: [RESPValue] = []
    var held = 0
    for piece in pieces {
        Array(piece).withUnsafeBytes { reader.take($0) }
        do throws(RESPError) {
            while let value = try reader.next() { values.append(value) }
        } catch {
            precondition((try? reader.next()) == nil && reader.error == error, "an error that does not stay")
            return (values, error, held)
        }
        held = max(held, reader.pendingBytes)
    }
    return (values, nil, held)
}
