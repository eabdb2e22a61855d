export declare const VERSITYGW_MODULE: string;
export declare function findVersitygw(): string | null;
