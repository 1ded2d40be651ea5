import DataFiles
import Tensor

// MARK: - Validation

extension ModelFile {
    /// Checks that the architecture chains from the input and that every tensor it needs is there with its
    /// shape, finite, and that no other tensor is.
    func validate(path: String) throws(WeightsFileError) {
        var shape = [1] + input.shape
        let axisLimit = 1 << 24
        guard input.shape.allSatisfy({ $0 >= 1 && $0 <= axisLimit }),
            input.shape.reduce(1, { $0 * $1 > Int(Int32.max) ? Int(Int32.max) + 1 : $0 * $1 }) <= Int(Int32.max)
        else {
            throw WeightsFileError(
                path: path,
                problem: .invalidArchitecture(
                    "input shape \(input.shape) needs axes of 1…\(axisLimit) and at most \(Int32.max) elements"))
        }
        var needed = Set<String>()
        var operations = 0, activations = elementCount(input.shape), parameters = 0
        for (index, spec) in architecture.enumerated() {
            let input = shape
            switch spec.outputShape(for: shape) {
            case .success(let next): shape = next
            case .failure(let mismatch):
                throw WeightsFileError(
                    path: path,
                    problem: .invalidArchitecture(
                        "layer \(index) (\(mismatch.layer)) needs input \(mismatch.expected), gets \(mismatch.actual)"))
            }
            let cost = spec.cost(input: input, output: shape)
            operations = operations > Int.max - cost.operations ? Int.max : operations + cost.operations
            activations = activations > Int.max - cost.elements ? Int.max : activations + cost.elements
            parameters += spec.tensorShapes.reduce(0) { $0 + elementCount($1.shape) }
            try WeightsLimits.check(
                "layer \(index) (\(spec.summary)): floats it allocates per input", cost.elements,
                WeightsLimits.maximumLayerElements, path: path)
            try WeightsLimits.check(
                "layers 0…\(index): floats they allocate per input, in all", activations,
                WeightsLimits.maximumActivationElements, path: path)
            try WeightsLimits.check(
                "layers 0…\(index): multiply-adds and comparisons per input", operations,
                WeightsLimits.maximumOperations, path: path)
            try WeightsLimits.check("layers 0…\(index): parameters", parameters, WeightsLimits.maximumParameters, path: path)
            if activationQuantization?.contains(where: { $0.layer == index }) ?? false {
                try WeightsLimits.check(
                    "layer \(index) (\(spec.summary)): inputs per output of an integer layer",
                    cost.operations / max(elementCount(Array(shape.dropFirst())), 1),
                    WeightsLimits.maximumIntegerFanIn, path: path)
            }
            for (role, expected) in spec.tensorShapes {
                let name = "\(index).\(role)"
                needed.insert(name)
                guard let tensor = tensors[name] else { throw WeightsFileError(path: path, problem: .missingTensor(name)) }
                guard tensor.shape == expected else {
                    throw WeightsFileError(path: path, problem: .tensorShapeMismatch(tensor: name, expected: expected, actual: tensor.shape))
                }
                if let bad = tensor.firstNonFiniteElement() {
                    throw WeightsFileError(path: path, problem: .invalidValue(tensor: name, element: bad, reason: "not finite"))
                }
                if role == "variance", let bad = tensor.dequantized().scalars.firstIndex(where: { $0 < 0 }) {
                    throw WeightsFileError(path: path, problem: .invalidValue(tensor: name, element: bad, reason: "a negative variance"))
                }
            }
        }
        if let extra = tensors.keys.sorted().first(where: { !needed.contains($0) }) {
            throw WeightsFileError(path: path, problem: .unexpectedTensor(extra))
        }
        if !labels.isEmpty {
            guard shape.count == 2 && shape[1] == labels.count else {
                throw WeightsFileError(
                    path: path,
                    problem: .invalidArchitecture(
                        "the model's output \(Array(shape.dropFirst())) is not one score for each of its \(labels.count) labels"))
            }
            if let problem = labels.lazy.compactMap(LabelText.problem).first {
                throw WeightsFileError(path: path, problem: .corruptHeader(problem))
            }
            guard Set(labels).count == labels.count else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture("labels must be distinct: \(labels)"))
            }
        }
        let numbers = [training?.validationAccuracy].compactMap { $0 } + preprocessing.values.flatMap(\.numbers)
        if let bad = numbers.first(where: { !$0.isFinite }) {
            throw WeightsFileError(path: path, problem: .corruptHeader("metadata holds the non-finite number \(bad)"))
        }
        if let problem = decision?.problem(labels: labels) {
            throw WeightsFileError(path: path, problem: .corruptHeader(problem))
        }
        if let problem = activationQuantizationProblem {
            throw WeightsFileError(path: path, problem: .corruptHeader(problem))
        }
        try WeightsLimits.checkPreprocessing(of: self, operations: operations, path: path)
        try checkMagnitudes(path: path)
    }

    /// Refuses weights whose magnitudes let some layer's outputs leave the float range for an input the
    /// preprocessing can produce (`WeightsLimits.inputMagnitude`): such a model could answer infinite or NaN
    /// scores. Layers with an activation quantization see their input clamped to 256 steps of its scale at most.
    /// A file whose preprocessing is none of the built-in tasks' is checked when a classifier of it loads the file,
    /// from the bound its preprocessing gives (`checkMagnitudes(inputMagnitude:path:)`).
    func checkMagnitudes(path: String) throws(WeightsFileError) {
        guard let bound = WeightsLimits.inputMagnitude(preprocessing) else { return }
        try checkMagnitudes(inputMagnitude: bound, path: path)
    }

    /// `checkMagnitudes(path:)` for inputs of at most `inputMagnitude` in magnitude.
    package func checkMagnitudes(inputMagnitude: Double, path: String) throws(WeightsFileError) {
        var bound = inputMagnitude
        let scales = Dictionary((activationQuantization ?? []).map { ($0.layer, Double($0.scale)) }, uniquingKeysWith: max)
        var shape = [1] + input.shape
        for (index, spec) in architecture.enumerated() {
            if let scale = scales[index] { bound = min(bound + scale, 256 * scale) }
            var layerTensors: [String: QuantizedTensor] = [:]
            for (role, _) in spec.tensorShapes { layerTensors[role] = tensors["\(index).\(role)"] }
            bound = spec.magnitudeBound(input: bound, tensors: layerTensors, inputShape: shape)
            shape = (try? spec.outputShape(for: shape).get()) ?? shape
            guard bound.isFinite, bound <= WeightsLimits.largestSafeMagnitude else {
                throw WeightsFileError(path: path, problem: .mayOverflow(layer: index, summary: spec.summary, bound: bound))
            }
        }
    }

    /// Whether a shape could fit a file of `fileBytes` bytes: no negative axis, and no axis or element count
    /// beyond 8 per byte (no format packs more than 4 elements per byte). It keeps byte-count arithmetic on
    /// a crafted header from overflowing.
    static func isPlausible(_ shape: [Int], fileBytes: Int) -> Bool {
        let limit = 8 * fileBytes + 8
        var count = 1
        for axis in shape {
            guard axis >= 0, axis <= limit else { return false }
            let (product, overflow) = count.multipliedReportingOverflow(by: axis)
            guard !overflow, product <= limit else { return false }
            count = product
        }
        return true
    }
}
