import Foundation
import Models
import Tensor
import Train

/// `bench shape`: one drawing's preprocessing and inference, for each shipped weights file, on one thread.
struct ShapeBenchmark {
    let plan: TimingPlan
    let weightsFolder: String

    func run() throws -> [Measurement] {
        BLAS.maxThreads = 1
        var generator = ShapeGenerator(seed: 77)
        let drawings = generator.samples(people: 4, perPerson: 8).map(\.drawing)
        var measurements: [Measurement] = []
        for format in ["int8", "f32"] {
            let path = "\(weightsFolder)/shape-classifier.\(format).weights"
            let classifier = try ShapeClassifier(file: try ModelFile(contentsOf: URL(fileURLWithPath: path)))
            let recognizer = ShapeRecognizer(engine: .model(classifier), model: "shape-classifier.\(format)")
            var next = 0
            // The whole path classify shape and apps take: checks, rasterizing, the model and the decision rule.
            measurements += measure("shape: rasterize + \(format) inference", flops: nil, plan: plan, [
                Candidate(impl: "tensor") {
                    next = (next + 1) % drawings.count
                    return Float((try? recognizer.recognize(drawings[next]))?.confidence ?? 0)
                },
            ])
            let images = drawings.map(classifier.rasterizer.rasterize)
            measurements += measure("shape: \(format) inference only", flops: nil, plan: plan, [
                Candidate(impl: "tensor") {
                    next = (next + 1) % images.count
                    return Float(classifier.classify(image: images[next]).confidence)
                },
            ])
            let plan = classifier.compiled.plan
            let workspace = plan.makeWorkspace()
            var output = [Float](repeating: 0, count: plan.outputCount)
            measurements += measure("shape: \(format) compiled plan only", flops: nil, plan: self.plan, [
                Candidate(impl: "tensor") {
                    next = (next + 1) % images.count
                    output.withUnsafeMutableBufferPointer { out in
                        images[next].withUnsafeBufferPointer { plan.run($0, into: out, workspace: workspace) }
                    }
                    return output[0]
                },
            ])
        }
        var next = 0
        let rasterizer = ShapeRasterizer.shipped
        measurements += measure("shape: rasterize only (level, stretched)", flops: nil, plan: plan, [
            Candidate(impl: "tensor") {
                next = (next + 1) % drawings.count
                return rasterizer.rasterize(drawings[next]).scalars[0]
            },
        ])
        return measurements
    }
}
