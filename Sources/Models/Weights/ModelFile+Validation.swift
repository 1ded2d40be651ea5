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
            throw WeightsFileError(path: path, problem: .invalidArchitecture(
                "input shape \(input.shape) needs axes of 1…\(axisLimit) and at most \(Int32.max) elements"))
        }
        var needed = Set<String>()
        var operations = 0
        for (index, spec) in architecture.enumerated() {
            let input = shape
            switch spec.outputShape(for: shape) {
            case .success(let next): shape = next
            case .failure(let mismatch):
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "layer \(index) (\(mismatch.layer)) needs input \(mismatch.expected), gets \(mismatch.actual)"))
            }
            let cost = spec.cost(input: input, output: shape)
            operations = operations > Int.max - cost.operations ? Int.max : operations + cost.operations
            guard cost.elements <= Self.elementBudget else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "layer \(index) (\(spec.summary)) needs \(cost.elements) floats of memory per sample; the limit is \(Self.elementBudget)"))
            }
            guard operations <= Self.operationBudget else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "the layers up to \(index) (\(spec.summary)) need \(operations) operations per sample; the limit is \(Self.operationBudget)"))
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
                throw WeightsFileError(path: path, problem: .invalidArchitecture(
                    "the model's output \(Array(shape.dropFirst())) is not one score for each of its \(labels.count) labels"))
            }
            guard Set(labels).count == labels.count, !labels.contains("") else {
                throw WeightsFileError(path: path, problem: .invalidArchitecture("labels must be distinct and not empty: \(labels)"))
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
    }

    /// The most floats one layer may allocate for one sample (256 MiB): more means a crafted or mistaken file.
    public static let elementBudget = 1 << 26
    /// The most multiply-adds (or comparisons) the whole model may take for one sample (about 17 billion).
    public static let operationBudget = 1 << 34


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
