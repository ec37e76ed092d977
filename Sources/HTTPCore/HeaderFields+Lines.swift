extension HeaderFields {
    /// Writes `Name: value\r\n` for each field into `buffer` (which has room for
    /// `serializedCount - 2` bytes) and returns the bytes written.
    ///
    /// A parsed field that was received as `Name: value\r\n` (one space after the colon, no
    /// trailing whitespace) already lies in the buffer as it is written: runs of such fields,
    /// one after the other in the head, are copied whole (one copy for most of a head, not two
    /// per field).
    public func writeFieldLines(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        storage.withUnsafeBytes { bytes in
            var at = 0
            // The run of verbatim bytes not yet copied.
            var runStart = 0
            var runEnd = 0
            func flushRun() {
                guard runEnd > runStart else { return }
                UnsafeMutableRawBufferPointer(rebasing: buffer[at...]).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: bytes[runStart..<runEnd]))
                at += runEnd - runStart
                runStart = runEnd
            }
            for span in spans {
                let nameEnd = Int(span.nameStart + span.nameCount)
                let valueEnd = Int(span.valueStart + span.valueCount)
                let verbatim =
                    Int(span.valueStart) == nameEnd + 2 && valueEnd + 2 <= bytes.count
                    && bytes[nameEnd] == UInt8(ascii: ":") && bytes[nameEnd + 1] == 0x20
                    && bytes[valueEnd] == 0x0D && bytes[valueEnd + 1] == 0x0A
                if verbatim {
                    if Int(span.nameStart) != runEnd || runEnd == runStart {
                        flushRun()
                        runStart = Int(span.nameStart)
                    }
                    runEnd = valueEnd + 2
                    continue
                }
                flushRun()
                let line = UnsafeMutableRawBufferPointer(rebasing: buffer[at...])
                line.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[span.name]))
                var offset = Int(span.nameCount)
                line[offset] = UInt8(ascii: ":")
                line[offset + 1] = 0x20
                offset += 2
                UnsafeMutableRawBufferPointer(rebasing: line[offset...]).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: bytes[span.value]))
                offset += Int(span.valueCount)
                line[offset] = 0x0D
                line[offset + 1] = 0x0A
                at += offset + 2
            }
            flushRun()
            return at
        }
    }
}
