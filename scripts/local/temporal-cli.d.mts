export declare const TEMPORAL_CLI_MODULE: string;
export declare function findTemporalCli(): string | null;
