export interface LayerGraph {
  readonly layer: string
  readonly domains: ReadonlyArray<string>
  /** from → to → the imports that make the edge (`file:line → specifier`). */
  readonly edges: ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<string>>>
}
export interface AllowedCircle {
  readonly layer: string
  readonly domains: ReadonlyArray<string>
  readonly why?: string
}
export declare const LAYERS: ReadonlyArray<string>
export declare const BEGIN: string
export declare const END: string
export declare const importsOf: (text: string) => ReadonlyArray<{ readonly specifier: string; readonly line: number }>
export declare const layerGraph: (root: string, layer: string) => LayerGraph
export declare const domainGraphs: (root: string) => ReadonlyArray<LayerGraph>
export declare const circlesOf: (graph: LayerGraph) => ReadonlyArray<ReadonlyArray<string>>
export declare const describeCircle: (graph: LayerGraph, circle: ReadonlyArray<string>) => string
export declare const problems: (
  graphs: ReadonlyArray<LayerGraph>,
  allowed?: ReadonlyArray<AllowedCircle>
) => ReadonlyArray<string>
export declare const markdownTables: (graphs: ReadonlyArray<LayerGraph>) => string
export declare const generatedSection: (doc: string) => string | undefined
