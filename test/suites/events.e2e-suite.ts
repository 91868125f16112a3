import { runArea } from './run-area';

runArea('events');
