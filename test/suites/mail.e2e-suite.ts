import { runArea } from './run-area';

runArea('mail');
