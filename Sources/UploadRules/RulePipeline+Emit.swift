import HTTPCore

extension RulePipeline {
    /// A part's bytes as the upstream gets them (after `strip_metadata`): hashed, inspected,
    /// written.
    mutating func emit(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        if !inspecting, let digests, digests.offloads(bytes.count) {
            // A large file's bytes go to the hashing threads by reference when the sink moves
            // them as the input's chains, else copied.
            let block = digests.sharedBlock(bytes.count)
            if output.write(bytes, sharingWith: block) {
                digests.share(block)
            } else {
                digests.update(bytes)
            }
            return
        }
        digests?.update(bytes)
        if inspecting { return inspect(bytes) }
        output.write(bytes)
    }
}
