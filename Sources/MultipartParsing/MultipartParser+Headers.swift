import HTTPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MultipartParser {
    /// Collects header lines (bounded by `partHeaderBytes`) until the empty line.
    ///
    /// Finds each line end with `memchr`. A line that lies whole in the read is validated and
    /// stored where it is; one split between reads is gathered first. A CR is allowed only
    /// right before the LF of a CRLF body.
    mutating func scanHeaders(
        _ buffer: UnsafeRawBufferPointer, from start: Int, _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) -> Int {
        let base = buffer.baseAddress!
        var index = start
        while index < buffer.count {
            let newline = memchr(base + index, 0x0A, buffer.count - index)
            let lineEnd = newline.map { UnsafeRawPointer($0) - base } ?? buffer.count
            let room = limits.partHeaderBytes - headerBytes
            let taken = lineEnd - index + (newline == nil ? 0 : 1)
            // Errors are reported at the earliest offending byte, so every split of the input
            // gives the same one: a CR held from the previous read, then a stray CR within the
            // limit, then the limit itself.
            if lineEnd > index, headerLineCR {
                throw MultipartError(.controlCharacterInHeader, at: offset(index) - 1)
            }
            let allowed = min(lineEnd, index + room)
            var crAtEnd = false
            if allowed > index, let cr = memchr(base + index, 0x0D, allowed - index) {
                let position = UnsafeRawPointer(cr) - base
                guard lineEnding == .crlf, position == lineEnd - 1 else {
                    throw MultipartError(.controlCharacterInHeader, at: offset(position))
                }
                crAtEnd = true
            }
            guard taken <= room else {
                throw MultipartError(.limitExceeded(.partHeaderBytes), at: offset(index + room))
            }
            headerBytes += taken
            // A line that lies whole in this read is taken where it is; only a line split
            // between reads is gathered in `headerLine`.
            var inPlace = UnsafeRawBufferPointer(start: nil, count: 0)
            if lineEnd > index {
                let kept = lineEnd - (crAtEnd ? 1 : 0)
                headerLineCR = crAtEnd
                if newline != nil, headerLine.isEmpty {
                    inPlace = UnsafeRawBufferPointer(rebasing: buffer[index..<kept])
                } else {
                    headerLine.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index..<kept]))
                }
            }
            guard newline != nil else { return buffer.count }
            guard headerLineCR == (lineEnding == .crlf) else {
                throw MultipartError(.controlCharacterInHeader, at: offset(lineEnd))
            }
            headerLineCR = false
            index = lineEnd + 1
            if !inPlace.isEmpty {
                try takeHeaderLine(inPlace.assumingMemoryBound(to: UInt8.self), endingAt: index)
            } else if headerLine.isEmpty {
                try beginPart(at: index, &handler)
                return index
            } else {
                // Moved out while it is read (no copy, and still unique when emptied).
                var gathered: [UInt8] = []
                swap(&gathered, &headerLine)
                defer {
                    gathered.removeAll(keepingCapacity: true)
                    swap(&gathered, &headerLine)
                }
                try gathered.withUnsafeBufferPointer { (line) throws(MultipartError) in
                    try takeHeaderLine(line, endingAt: index)
                }
            }
        }
        return index
    }

    /// Validates one header line and appends it to the part's fields, noting which of the
    /// part's own headers it is (`PartHeaderIndex`), so the part's end reads no name twice.
    mutating func takeHeaderLine(_ line: UnsafeBufferPointer<UInt8>, endingAt index: Int)
        throws(MultipartError)
    {
        let lineOffset = offset(index) - Int64(line.count) - (lineEnding == .crlf ? 2 : 1)
        let fieldsSoFar = headerFields.count
        // (colon, valueStart, valueEnd, the first forbidden byte), or a name error.
        let scanned: Result<(Int, Int, Int, Int?), MultipartError> = {
            let first = line[0]
            if first == 0x20 || first == 0x09 {
                return .failure(
                    MultipartError(fieldsSoFar == 0 ? .leadingWhitespace : .headerFolding, at: lineOffset))
            }
            var colon = 0
            while colon < line.count, ByteClass.isTokenChar(line[colon]) { colon += 1 }
            guard colon > 0, colon < line.count else {
                return .failure(MultipartError(.invalidHeaderName, at: lineOffset + Int64(colon)))
            }
            switch line[colon] {
            case UInt8(ascii: ":"): break
            case 0x20, 0x09:
                return .failure(MultipartError(.whitespaceBeforeColon, at: lineOffset + Int64(colon)))
            default: return .failure(MultipartError(.invalidHeaderName, at: lineOffset + Int64(colon)))
            }
            var valueStart = colon + 1
            var valueEnd = line.count
            while valueStart < valueEnd, line[valueStart] == 0x20 || line[valueStart] == 0x09 {
                valueStart += 1
            }
            while valueEnd > valueStart, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 {
                valueEnd -= 1
            }
            let position = ByteClass.firstForbiddenInFieldValue(
                line.baseAddress!, from: valueStart, to: valueEnd)
            return .success((colon, valueStart, valueEnd, position < valueEnd ? position : nil))
        }()
        let (colon, valueStart, valueEnd, forbidden) = try scanned.get()
        if valueStart == colon + 1, valueStart < line.count {
            try flag(.headerWithoutSpace, at: lineOffset + Int64(valueStart))
        }
        if let forbidden {
            throw MultipartError(.controlCharacterInHeader, at: lineOffset + Int64(forbidden))
        }
        guard fieldsSoFar < limits.headersPerPart else {
            throw MultipartError(.limitExceeded(.headersPerPart), at: lineOffset)
        }
        headerFields.append(
            name: UnsafeBufferPointer(rebasing: line[..<colon]),
            value: UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd]))
        noteHeader(UnsafeBufferPointer(rebasing: line[..<colon]), at: fieldsSoFar)
    }

    /// Records what the field at `position`, called `name`, is to the part.
    mutating func noteHeader(_ name: UnsafeBufferPointer<UInt8>, at position: Int) {
        if asciiCaseInsensitiveEquals(name, "Content-Disposition") {
            partHeaders.disposition.note(position)
        } else if asciiCaseInsensitiveEquals(name, "Content-Type") {
            partHeaders.contentType.note(position)
        } else if asciiCaseInsensitiveEquals(name, "Content-Transfer-Encoding") {
            partHeaders.transferEncoding.note(position)
            partHeaders.anomalies.insert(.contentTransferEncoding)
        } else if !policy.keeps(name) {
            partHeaders.anomalies.insert(.extraPartHeader)
        } else if partHeaders.repeatedKept == nil, isNamedBefore(position, name) {
            // A kept header must be unique in its part (an upstream could read either value).
            partHeaders.repeatedKept = String(decoding: name, as: UTF8.self)
        }
    }

    /// The empty line ended the header section: validate it and report the part.
    ///
    /// Refused: a missing or repeated `Content-Disposition`, a repeated `Content-Type`,
    /// `Content-Transfer-Encoding` or kept header. Flagged (and refused only by the policy):
    /// the disposition's repairs, a `Content-Type` that does not parse, and headers that are
    /// not forwarded.
    mutating func beginPart(at index: Int, _ handler: inout some MultipartEventHandler) throws(MultipartError)
    {
        let at = offset(index)
        if partHeaders.disposition.count > 1 {
            throw MultipartError(.duplicateHeader("Content-Disposition"), at: at)
        }
        if partHeaders.contentType.count > 1 {
            throw MultipartError(.duplicateHeader("Content-Type"), at: at)
        }
        if partHeaders.transferEncoding.count > 1 {
            throw MultipartError(.duplicateHeader("Content-Transfer-Encoding"), at: at)
        }
        guard let dispositionAt = partHeaders.disposition.first else {
            throw MultipartError(.missingContentDisposition, at: at)
        }
        let disposition: ContentDisposition
        do {
            disposition = try ContentDisposition.parse(
                headerFields.valueBytes(at: dispositionAt), reusing: &valueBuffers.disposition)
        } catch {
            throw MultipartError(.invalidContentDisposition(error.reason), at: at)
        }
        guard disposition.type == "form-data" else {
            throw MultipartError(.unsupportedDispositionType, at: at)
        }
        guard disposition.name != nil else { throw MultipartError(.missingName, at: at) }
        if let repeated = partHeaders.repeatedKept {
            throw MultipartError(.duplicateHeader(repeated), at: at)
        }
        var found = partHeaders.anomalies
        if disposition.anomalies.contains(.unquotedValue) { found.insert(.unquotedParameter) }
        if disposition.anomalies.contains(.extendedFilename) { found.insert(.extendedFilename) }
        if disposition.anomalies.contains(.inlineContentType) { found.insert(.inlineContentType) }
        if disposition.anomalies.contains(.ignoredJunk) { found.insert(.dispositionJunk) }

        var contentTypeValue: [UInt8]?
        if let position = partHeaders.contentType.first {
            // Copied into a buffer kept from part to part (the last head that shared it is gone).
            valueBuffers.contentType.removeAll(keepingCapacity: true)
            valueBuffers.contentType.append(contentsOf: headerFields.valueBytes(at: position))
            contentTypeValue = valueBuffers.contentType
        }
        if let inline = disposition.inlineContentType {
            guard contentTypeValue == nil else {
                throw MultipartError(.duplicateHeader("Content-Type"), at: at)
            }
            contentTypeValue = inline
        }
        var contentType: MediaType?
        if let contentTypeValue, !contentTypeValue.isEmpty {
            contentType = try? MediaType.parse(contentTypeValue)
            if contentType == nil { found.insert(.invalidPartContentType) }
        }
        try flag(found, at: at)

        if disposition.isFile {
            fileCount += 1
            guard fileCount <= limits.files else { throw MultipartError(.limitExceeded(.files), at: at) }
            partByteLimit = limits.fileBytes
            partLimit = .fileBytes
        } else {
            fieldCount += 1
            guard fieldCount <= limits.fields else { throw MultipartError(.limitExceeded(.fields), at: at) }
            partByteLimit = limits.fieldBytes
            partLimit = .fieldBytes
        }
        partBytes = 0
        insidePart = true
        state = .body
        // The head is a view of `head`, filled in place (its buffers are the parser's).
        head.disposition = consume disposition
        head.contentType = consume contentType
        head.declaredContentType = contentTypeValue.flatMap { $0.isEmpty ? nil : $0 }
        handler.handle(.partBegin(PartHead(index: partCount - 1, fields: head, contentOffset: at)))
    }

    /// Whether a field before `position` is called `name`.
    private func isNamedBefore(_ position: Int, _ name: UnsafeBufferPointer<UInt8>) -> Bool {
        var earlier = 0
        var found = false
        headerFields.forEachField { other, _ in
            if earlier < position, asciiCaseInsensitiveEquals(other, name) { found = true }
            earlier += 1
        }
        return found
    }

}
