import HTTPCore

extension RulePipeline {
    /// The buffers a pipeline grows (the sniff window, a part head's fields, the encoder's
    /// head buffer), taken from one body's pipeline for the next body's on the same connection.
    public struct Buffers {
        var lookahead: [UInt8] = []
        var headScratch = HeaderFields()
        var encoderScratch: [UInt8] = []

        /// No buffers: a pipeline given them allocates its own.
        public init() {}
    }

    /// Takes this pipeline's buffers (it must not be used after); the pipeline they are given
    /// to empties them.
    public mutating func takeBuffers() -> Buffers {
        var buffers = Buffers()
        swap(&buffers.lookahead, &lookahead)
        swap(&buffers.headScratch, &headScratch)
        buffers.encoderScratch = encoder.takeScratch()
        return buffers
    }
}
