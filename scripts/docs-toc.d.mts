/** Types of scripts/docs-toc.mjs, for the docs test. */
export interface Heading {
  level: number;
  title: string;
  anchor: string;
}
export function slug(heading: string): string;
export function headings(text: string): Heading[];
export function tocOf(text: string): string;
export function withToc(text: string): string;
export function tocPages(repo: string): string[];
