import { runArea } from './run-area';

runArea('licences');
