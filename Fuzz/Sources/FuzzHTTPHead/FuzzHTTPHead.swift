import HTTP1

/// The head scanner and parsers on arbitrary bytes: scanning in two pieces finds the same end
/// as scanning whole, and a parsed request re-serializes to a head that parses to the same
/// method, target and fields.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let input = Array(bytes.dropFirst())
    let cut = input.isEmpty ? 0 : Int(bytes[0]) % (input.count + 1)
    var whole = HeadScanner(limit: 4096)
    var wholeEnd: Int?
    var wholeFailed = false
    do throws(HTTP1Error) {
        wholeEnd = try whole.scan(input)
    } catch {
        wholeFailed = true
    }
    var split = HeadScanner(limit: 4096)
    var splitEnd: Int?
    var splitFailed = false
    do throws(HTTP1Error) {
        if let end = try split.scan(Array(input[..<cut])) {
            splitEnd = end
        } else if let end = try split.scan(Array(input[cut...])) {
            splitEnd = end + cut
        }
    } catch {
        splitFailed = true
    }
    precondition(
        wholeFailed == splitFailed && wholeEnd == splitEnd, "head scanning differs across a split at \(cut)")
    if let request = try? HeadParser.parseRequest(input) {
        // Serialized heads always say HTTP/1.1 (what the upstream gets, with a Host the proxy
        // sets); the rest must survive.
        // (An absolute-form target adds a Host field, so the field limit is relaxed here.)
        let again = try? HeadParser.parseRequest(request.serialized(), limits: .init(fields: 10_000))
        precondition(
            request.headers["Host"] == nil
                || (again?.method == request.method && again?.target == request.target
                    && again?.headers == request.headers),
            "request head does not survive serialization")
        _ = try? MessageFraming.request(request)
    }
    if let response = try? HeadParser.parseResponse(input) {
        _ = try? MessageFraming.response(response, requestMethod: "GET")
    }
    return 0
}
