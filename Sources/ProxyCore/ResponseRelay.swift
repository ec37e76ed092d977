import HTTP1
import HTTPCore

/// Moves a response body towards the client.
enum ResponseRelay {
    /// One step of the response body: a zero-copy move under a Content-Length, else de-framed
    /// (and re-chunked for the client when `chunked`) through the action buffer. `available`
    /// is what the input holds once queued moves ran. Returns `false` for a malformed body.
    static func forward(
        _ input: some ByteSource, _ available: inout Int, _ decoder: inout BodyDecoder, chunked: Bool,
        _ actions: inout ActionBuffer
    ) -> Bool {
        if let remaining = decoder.remainingLength {
            let count = Int(min(Int64(available), remaining))
            if count > 0 { actions.append(.moveResponseBody(count)) }
            decoder.skip(count)
            available -= count
            return true
        }
        var failure: HTTP1Error?
        actions.sendClient { out in
            do throws(HTTP1Error) {
                _ = try input.decodeBody(&decoder) { bytes in
                    if chunked {
                        ChunkedEncoder.writeChunk(bytes, into: &out)
                    } else {
                        out.write(bytes)
                    }
                }
            } catch {
                failure = error
            }
        }
        available = input.count
        return failure == nil
    }
}
